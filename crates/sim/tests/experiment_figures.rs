//! The experiments' figures and tables as data: which points land in which figure and
//! series, the file names (the same as before figures became specs), and the summary
//! tables, on small sets of points written by hand.

use report::{FigureFile, Series};
use sim::experiments::burnett_ordering::{self, OrderingPoint};
use sim::experiments::kotz_ellis::{self, KotzPoint};
use sim::experiments::xmf_cleaning::{self, XmfPoint};

fn names(files: &[FigureFile]) -> Vec<&str> {
    files.iter().map(|f| f.file_name.as_str()).collect()
}

fn series<'a>(file: &'a FigureFile, label: &str) -> &'a Series {
    file.figure
        .series
        .iter()
        .find(|s| s.label.as_deref() == Some(label))
        .unwrap_or_else(|| panic!("no series {label} in {}", file.file_name))
}

fn xmf(cleaner: &'static str, cache_buffers: u32, reads: u64, writes: u64) -> XmfPoint {
    XmfPoint {
        cleaner,
        cache_buffers,
        disk_reads: reads,
        disk_writes: writes,
        cleaner_writes: 0,
        time_s: 1.0,
    }
}

#[test]
fn xmf_figures_draw_each_cleaner_against_megabytes_and_the_table_pairs_sizes() {
    let points = [
        xmf("getnewbuf", 128, 10, 20),
        xmf("getnewbuf", 256, 11, 21),
        xmf("clock", 128, 12, 5),
    ];
    let files = xmf_cleaning::figures(&points);
    assert_eq!(names(&files), ["fig21-writes.svg", "fig21-reads.svg"]);
    assert_eq!(files[0].figure.y.label, "disk writes");
    assert_eq!(files[0].figure.x.label, "cache size (MB)");
    assert_eq!(
        series(&files[0], "getnewbuf").points,
        [(1.0, 20.0), (2.0, 21.0)]
    );
    assert_eq!(series(&files[1], "clock").points, [(1.0, 12.0)]);
    // 256 buffers has no clock point, so no row.
    assert_eq!(
        xmf_cleaning::table(&points).to_text(),
        "buffers  MB  getnewbuf reads  clock reads  getnewbuf writes  clock writes\n\
         128       1               10           12                20             5\n"
    );
}

fn kotz(
    figure: &'static str,
    pattern: &'static str,
    compute: bool,
    policy: &'static str,
) -> KotzPoint {
    KotzPoint {
        figure,
        pattern,
        compute,
        write_policy: policy,
        cache_buffers: 20,
        record_blocks: 1.0,
        time_s: 5.0,
        ideal_s: 3.0,
        disk_writes: 0,
        rewrite_mistakes: 0,
    }
}

#[test]
fn kotz_figures_select_by_figure_pattern_and_compute() {
    let points = [
        kotz("fig1", "gw", false, "writeback"),
        kotz("fig1", "gw", false, "writefull"),
        kotz("fig3", "lw1", true, "writethru"),
        KotzPoint {
            record_blocks: 0.5,
            ..kotz("fig5", "seg", false, "writefree")
        },
    ];
    let files = kotz_ellis::figures(&points);
    assert_eq!(
        names(&files),
        [
            "fig1-gw.svg",
            "fig2-gw-compute.svg",
            "fig3-lw1.svg",
            "fig3-lw1-compute.svg",
            "fig4-seg.svg",
            "fig5a-gw.svg",
            "fig5b-lw1.svg",
            "fig5c-seg.svg"
        ]
    );
    let fig1 = &files[0];
    assert_eq!(fig1.figure.title, "Figure 1: gw, cache size");
    assert_eq!(fig1.figure.series.len(), 5);
    assert_eq!(series(fig1, "writeback").points, [(20.0, 5.0)]);
    assert!(series(fig1, "writethru").points.is_empty());
    assert_eq!(series(fig1, "ideal").points, [(20.0, 3.0)]);
    assert_eq!(series(fig1, "ideal").style, report::Style::Dashed);
    // The compute point is in the compute panel only.
    assert!(files[2].figure.series.iter().all(|s| s.points.is_empty()));
    assert_eq!(series(&files[3], "writethru").points, [(20.0, 5.0)]);
    assert_eq!(
        files[7].figure.title,
        "Figure 5: seg, record size (80 buffers)"
    );
    assert_eq!(series(&files[7], "writefree").points, [(0.5, 5.0)]);
}

#[test]
fn kotz_caching_table_sets_ours_beside_the_papers() {
    let points = [KotzPoint {
        time_s: 127.04,
        ..kotz("caching", "lw1", false, "none")
    }];
    let table = kotz_ellis::caching_table(&points);
    assert_eq!(table.rows().len(), kotz_ellis::PAPER_CACHING_TABLE.len());
    assert_eq!(
        table.rows()[0],
        ["lw1", "1 block", "127.3", "127.0", "16.4", "NaN"]
    );
    assert_eq!(table.cell(3, 1), Some("1/4 block"));
}

fn ordering(
    param: &'static str,
    value: u64,
    scheduler: &'static str,
    mechanism: &'static str,
) -> OrderingPoint {
    OrderingPoint {
        figure: "",
        mechanism,
        scheduler,
        param,
        value,
        time_s: 2.5,
        disk_reads: 7,
        disk_writes: 9,
        eviction_writes: 4,
        duplicates: 1,
        violations: 0,
    }
}

#[test]
fn burnett_figures_keep_their_file_names_and_draw_one_line_per_mechanism() {
    let points = [
        ordering("pages_read", 2, "fifo", "graph"),
        ordering("pages_read", 2, "clook", "graph"),
        ordering("cache_pages", 2048, "fifo", "none"),
    ];
    let files = burnett_ordering::figures(&points, true);
    let mut got = names(&files);
    got.sort_unstable();
    assert_eq!(
        got,
        [
            "fig4.12-pages_read-time-clook.svg",
            "fig4.12-pages_read-time-fifo.svg",
            "fig4.13-pages_read-disk-reads.svg",
            "fig4.13-pages_read-disk-writes.svg",
            "fig4.14-pages_written-time-clook.svg",
            "fig4.14-pages_written-time-fifo.svg",
            "fig4.15-pages_written-disk-reads.svg",
            "fig4.15-pages_written-disk-writes.svg",
            "fig4.16-log_bytes-time-clook.svg",
            "fig4.16-log_bytes-time-fifo.svg",
            "fig4.17-transactions-time-clook.svg",
            "fig4.17-transactions-time-fifo.svg",
            "fig4.18-cache_pages-time-clook.svg",
            "fig4.18-cache_pages-time-fifo.svg",
            "fig4.19-cache_pages-writes-due-to-eviction.svg",
        ]
    );
    let by_name = |n: &str| files.iter().find(|f| f.file_name == n).unwrap();
    let time = by_name("fig4.12-pages_read-time-clook.svg");
    assert_eq!(
        time.figure.title,
        "Figure 4.12: execution time, CLOOK scheduling"
    );
    assert_eq!(time.figure.x.label, "pages read per transaction");
    let labels: Vec<_> = time
        .figure
        .series
        .iter()
        .map(|s| s.label.clone().unwrap())
        .collect();
    assert_eq!(labels, ["none", "fsync", "barrier", "graph"]);
    assert_eq!(series(time, "graph").points, [(2.0, 2.5)]);
    let reads = by_name("fig4.13-pages_read-disk-reads.svg");
    assert_eq!(series(reads, "graph").points, [(2.0, 7.0)]);
    let eviction = by_name("fig4.19-cache_pages-writes-due-to-eviction.svg");
    assert_eq!(eviction.figure.y.label, "writes due to eviction");
    assert_eq!(series(eviction, "none").points, [(2048.0, 4.0)]);
    // Full runs draw the same figures (their sweeps differ only in values).
    assert_eq!(burnett_ordering::figures(&points, false).len(), files.len());
}

#[test]
fn burnett_defaults_table_takes_the_default_points() {
    let points = [
        ordering("transactions", 10_000, "fifo", "fsync"),
        ordering("transactions", 5_000, "fifo", "fsync"),
        ordering("cache_pages", 20_000, "clook", "graph"),
    ];
    let full = burnett_ordering::defaults_table(&points, false);
    assert_eq!(full.rows(), [["fifo", "fsync", "2.5", "7", "9", "1", "0"]]);
    let quick = burnett_ordering::defaults_table(&points, true);
    assert_eq!(quick.rows().len(), 2);
    assert_eq!(quick.cell(1, 1), Some("graph"));
}

#[test]
fn ubc_figure_sets_the_paper_dashed_beside_the_model() {
    let points = sim::experiments::ubc::run();
    let files = sim::experiments::ubc::figures(&points);
    assert_eq!(names(&files), ["ubc-time.svg"]);
    let f = &files[0];
    let rows = points.iter().filter(|p| p.layout == "split").count();
    assert_eq!(series(f, "split (model)").points.len(), rows);
    assert_eq!(series(f, "split (model)").points[0].0, 1.0);
    let paper = series(f, "NetBSD with UBC (paper)");
    assert_eq!(paper.style, report::Style::Dashed);
    let with_paper = points
        .iter()
        .filter(|p| p.layout == "unified" && p.paper_s.is_some())
        .count();
    assert_eq!(paper.points.len(), with_paper);
}
