//! proptest: random single-thread operation sequences against a `Vec<u8>` model of the
//! file, for both lookups, through a pool small enough that most operations evict.

use std::time::Duration;

use pool::{BufferPool, Lookup, MemStorage, PoolError, WritePolicy};
use proptest::prelude::*;

const PS: u64 = 4096;
const SPAN: u64 = 9 * PS;

#[derive(Clone, Debug)]
enum Op {
    Write { off: u64, len: usize, val: u8 },
    Read { off: u64, len: usize },
    SetLen(u64),
    Fsync,
    Pin(u64),
    PinMut { page: u64, at: usize, val: u8 },
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..SPAN, 1..2 * PS as usize, any::<u8>()).prop_map(|(off, len, val)| Op::Write { off, len, val }),
        4 => (0..SPAN + 100, 0..2 * PS as usize).prop_map(|(off, len)| Op::Read { off, len }),
        1 => (0..SPAN).prop_map(Op::SetLen),
        1 => Just(Op::Fsync),
        1 => (0..10u64).prop_map(Op::Pin),
        1 => (0..10u64, 0..PS as usize, any::<u8>()).prop_map(|(page, at, val)| Op::PinMut { page, at, val }),
        1 => Just(Op::Reopen),
    ]
}

fn run(ops: &[Op], lookup: Lookup, read_ahead: usize, write_through: bool) {
    run_with(ops, lookup, read_ahead, write_through, "clock");
}

fn run_with(ops: &[Op], lookup: Lookup, read_ahead: usize, write_through: bool, policy: &str) {
    let st = MemStorage::new();
    let pool = BufferPool::builder()
        .capacity_frames(4 + read_ahead)
        .pin_limit(1)
        .read_ahead(read_ahead)
        .lookup(lookup)
        .policy(policy)
        .write_policy(if write_through {
            WritePolicy::WriteThrough
        } else {
            WritePolicy::WriteBack {
                interval: Duration::from_secs(3600),
                age: Duration::from_secs(3600),
            }
        })
        .build_with_storage(st.clone())
        .unwrap();
    let mut f = pool.create("/f").unwrap();
    let mut model: Vec<u8> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        match *op {
            Op::Write { off, len, val } => {
                pool.write(f, off, &vec![val; len]).unwrap();
                let end = off as usize + len;
                if model.len() < end {
                    model.resize(end, 0);
                }
                model[off as usize..end].fill(val);
            }
            Op::Read { off, len } => {
                let mut buf = vec![0xAAu8; len];
                let n = if i % 2 == 0 {
                    pool.read(f, off, &mut buf)
                } else {
                    pool.read_optimistic(f, off, &mut buf)
                }
                .unwrap();
                let want = model.len().saturating_sub(off as usize).min(len);
                assert_eq!(n, want, "op {i}: {op:?}");
                if n > 0 {
                    assert_eq!(
                        &buf[..n],
                        &model[off as usize..off as usize + n],
                        "op {i}: {op:?}"
                    );
                }
            }
            Op::SetLen(n) => {
                pool.set_len(f, n).unwrap();
                model.resize(n as usize, 0);
            }
            Op::Fsync => {
                pool.fsync(f).unwrap();
                assert_eq!(st.contents("/f".as_ref()).unwrap(), model, "op {i}");
            }
            Op::Pin(page) => match pool.pin(f, page) {
                Ok(g) => {
                    let start = (page * PS) as usize;
                    let end = model.len().min(start + PS as usize);
                    assert_eq!(&g[..end - start], &model[start..end]);
                    assert!(g[end - start..].iter().all(|&b| b == 0));
                }
                Err(PoolError::PastEnd { page: p, pages }) => {
                    assert_eq!(p, page);
                    assert_eq!(pages, (model.len() as u64).div_ceil(PS));
                    assert!(page >= pages);
                }
                Err(e) => panic!("op {i}: {e}"),
            },
            Op::PinMut { page, at, val } => match pool.pin_mut(f, page) {
                Ok(mut g) => {
                    g[at] = val;
                    let pos = (page * PS) as usize + at;
                    if pos < model.len() {
                        model[pos] = val;
                    }
                }
                Err(PoolError::PastEnd { .. }) => {
                    assert!(page * PS >= model.len() as u64)
                }
                Err(e) => panic!("op {i}: {e}"),
            },
            Op::Reopen => {
                pool.close(f).unwrap();
                assert_eq!(st.contents("/f".as_ref()).unwrap(), model, "op {i}");
                f = pool.open("/f").unwrap();
            }
        }
        assert_eq!(pool.len(f).unwrap(), model.len() as u64, "op {i}");
    }
    pool.fsync(f).unwrap();
    assert_eq!(st.contents("/f".as_ref()).unwrap(), model);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn mapped_matches_the_model(ops in proptest::collection::vec(op(), 1..60), ra in 0usize..3) {
        run(&ops, Lookup::Mapped, ra, false);
    }

    #[test]
    fn hashed_matches_the_model(ops in proptest::collection::vec(op(), 1..60), ra in 0usize..3) {
        run(&ops, Lookup::Hashed, ra, false);
    }

    #[test]
    fn other_policies_match_the_model(
        ops in proptest::collection::vec(op(), 1..60),
        policy in proptest::sample::select(vec!["lru", "arc", "twoq", "lirs", "sieve", "s3fifo", "random", "clockpro"]),
    ) {
        run_with(&ops, Lookup::Hashed, 1, false, policy);
    }

    #[test]
    fn write_through_matches_the_model(ops in proptest::collection::vec(op(), 1..60)) {
        run(&ops, Lookup::Mapped, 2, true);
    }
}
