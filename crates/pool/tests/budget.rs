//! A memory budget shared by pools: what it refuses, how it grants, and the scenario it
//! exists for (`pool::budget::IndexScan`: a scanning pool and a pool holding a hot index
//! under one budget). Sprite's plain age comparison lets the scan take index pages
//! whenever the index has been idle longer than the scan's oldest page — which it is
//! between sweeps — so the index refaults on every sweep. With the penalty (the index
//! declared as the application's working memory, as Nelson's penalty protects process
//! pages) the index stays resident.

use pool::budget::{
    ArbiterSpec, BudgetError, Consumer, IndexScan, Kind, MemoryBudget, PoolConsumer,
};
use pool::{BufferPool, MemStorage};
use std::sync::Arc;

#[test]
#[cfg_attr(miri, ignore = "sleeps two seconds per arbiter")]
fn the_penalty_keeps_the_index_resident_where_plain_age_lets_the_scan_take_it() {
    let scenario = IndexScan::default();
    let sprite = scenario.run(&ArbiterSpec::SPRITE, Kind::Memory).unwrap();
    let penalty = scenario
        .run(&ArbiterSpec::Age { penalty_s: 60.0 }, Kind::Memory)
        .unwrap();
    eprintln!("sprite: {sprite:?}\npenalty: {penalty:?}");
    assert!(
        sprite.scan_got > 0 && sprite.index_misses >= scenario.index_pages,
        "plain age comparison lets the scan take index pages, refaulted on later sweeps: {sprite:?}"
    );
    assert_eq!(penalty.index_misses, 0, "{penalty:?}");
    assert_eq!(
        penalty.index_resident, scenario.index_pages as usize,
        "{penalty:?}"
    );
    assert_eq!(penalty.scan_got, 0, "{penalty:?}");
    assert!(penalty.scan_asked > 0, "the scan did ask: {penalty:?}");
    // Regret, with no constant, keeps the index too: the index never evicts, so it is
    // never on record, and without evidence against it the scan recycles its own pages
    // (docs/experiments/nelson.md).
    let regret = scenario.run(&ArbiterSpec::Regret, Kind::Memory).unwrap();
    assert_eq!(
        (regret.index_misses, regret.index_resident, regret.scan_got),
        (0, scenario.index_pages as usize, 0),
        "{regret:?}"
    );
    assert!(regret.scan_asked > 0, "the scan did ask: {regret:?}");
}

fn pool(storage: &MemStorage, frames: usize) -> Arc<BufferPool> {
    Arc::new(
        BufferPool::builder()
            .capacity_frames(frames)
            .read_ahead(0)
            .pin_limit(1)
            .build_with_storage(storage.clone())
            .unwrap(),
    )
}

#[test]
#[cfg_attr(miri, ignore = "builds whole pools: minutes under Miri")]
fn a_budget_refuses_what_it_cannot_honour_and_grants_free_pages_first() {
    let storage = MemStorage::new();
    let a = pool(&storage, 40);
    let b = pool(&storage, 40);
    let both = || -> Vec<Arc<dyn Consumer>> {
        vec![
            Arc::new(PoolConsumer::new(Arc::clone(&a), Kind::File)),
            Arc::new(PoolConsumer::new(Arc::clone(&b), Kind::File)),
        ]
    };
    let sprite = ArbiterSpec::SPRITE;
    assert!(matches!(
        MemoryBudget::new(79, &sprite, both()),
        Err(BudgetError::Overcommitted {
            held: 80,
            total: 79
        })
    ));
    let f = a.create("/pinned").unwrap();
    a.write(f, 0, &[1; 8 * 4096]).unwrap();
    let pins: Vec<_> = (0..5).map(|p| a.pin(f, p).unwrap()).collect();
    // a: 5 pinned + 1 to load into; b: its floor of 2 (pin limit 1, no read-ahead, 1)
    assert!(matches!(
        MemoryBudget::new(5, &sprite, both()),
        Err(BudgetError::BelowPinned {
            pinned: 8,
            total: 5
        })
    ));
    drop(pins);
    assert!(matches!(
        MemoryBudget::new(100, &sprite, vec![]),
        Err(BudgetError::NoConsumers)
    ));
    for penalty_s in [-5.0, f64::NAN, 1e9] {
        assert!(matches!(
            MemoryBudget::new(100, &ArbiterSpec::Age { penalty_s }, both()),
            Err(BudgetError::Arbiter(_))
        ));
    }
    let budget = MemoryBudget::new(100, &sprite, both()).unwrap();
    assert!(matches!(
        budget.request(2, 1),
        Err(BudgetError::UnknownConsumer { id: 2, count: 2 })
    ));
    // 20 pages are free: granted first, without negotiating
    assert_eq!(budget.request(0, 8).unwrap(), 8);
    assert_eq!((a.capacity_frames(), budget.free_pages()), (48, 12));
    assert_eq!(budget.negotiations().asked(0, 1), 0);
    // then only the free pages: an empty pool has no idle page to compare, so the
    // arbiter cannot take from it
    assert_eq!(budget.request(0, 20).unwrap(), 12);
    assert_eq!((a.capacity_frames(), b.capacity_frames()), (60, 40));
    assert_eq!(
        (a.capacity_frames() + b.capacity_frames()) as u64 + budget.free_pages(),
        100
    );
}
