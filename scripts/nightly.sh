# Sourced by fuzz-ci.sh and miri-ci.sh: the nightly toolchain they use, installed through
# rustup (minimal profile) with the components given to `ensure_nightly` if missing.
#
# Pinned, because Miri's checks change from one nightly to the next. nightly-2026-05-20
# (rustc e50aa6fba) is the one the scripts were measured with. nightly-2026-10-29's Miri
# type-checks the C-variadic arguments of `syscall` (rust-lang/rust#161734, in nightlies
# from 2026-09-10) and stops at parking_lot_core 0.9.12, the pool's lock crate, which
# passes `&AtomicI32` to `syscall(SYS_futex, ..)` where `*mut u32` is expected: every
# thread that parks fails. Move the pin once the locked parking_lot_core passes (0.10,
# which parking_lot 0.13 uses, casts to `*mut u32`). BUFCACHE_NIGHTLY=nightly (or another
# date) overrides it.
nightly=${BUFCACHE_NIGHTLY:-nightly-2026-05-20}

ensure_nightly() {
    if ! rustup run "$nightly" rustc --version >/dev/null 2>&1; then
        rustup toolchain install "$nightly" --profile minimal
    fi
    if [ $# -gt 0 ]; then
        rustup component add --toolchain "$nightly" "$@"
    fi
}
