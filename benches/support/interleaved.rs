//! Same-run comparison loops shared by the benches that compare agentsig
//! with another crate: the functions take turns, round after round, so a
//! change in the load of the shared machine falls on all of them alike.

// Each bench includes this module by path; not every bench uses every helper.
#![allow(dead_code)]

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Calls of `f` that take about `target`.
fn calls_for(f: &dyn Fn(), target: Duration) -> u32 {
    let start = Instant::now();
    let mut calls = 0u32;
    while start.elapsed() < target {
        f();
        calls += 1;
    }
    calls.max(1)
}

/// Median time per call of each function over `rounds` interleaved rounds
/// of about 50 ms each.
pub fn interleaved_medians(fs: &[&dyn Fn()], rounds: usize) -> Vec<Duration> {
    let per_round = Duration::from_millis(50);
    let calls: Vec<u32> = fs.iter().map(|f| calls_for(*f, per_round)).collect();
    let mut times = vec![Vec::with_capacity(rounds); fs.len()];
    for _ in 0..rounds {
        for (k, f) in fs.iter().enumerate() {
            let t = Instant::now();
            for _ in 0..calls[k] {
                f();
            }
            times[k].push(t.elapsed() / calls[k]);
        }
    }
    times
        .into_iter()
        .map(|mut t| {
            t.sort();
            t[rounds / 2]
        })
        .collect()
}

/// `ours` and `theirs` in µs and their ratio (the other's time / ours:
/// above 1.0, agentsig is faster).
pub fn line(what: &str, ours: Duration, theirs: Duration, other: &str) -> String {
    format!(
        "{what}: agentsig {:.1} µs, {other} {:.1} µs, {:.2}x (above 1: agentsig faster)",
        ours.as_secs_f64() * 1e6,
        theirs.as_secs_f64() * 1e6,
        theirs.as_secs_f64() / ours.as_secs_f64()
    )
}

/// Nanoseconds per call of `f` (which must return true), the median of 7
/// batches of `iters` calls; callers alternate the contenders batch by
/// batch.
pub fn per_call(iters: u32, f: &dyn Fn() -> bool) -> f64 {
    let mut t: Vec<f64> = (0..7)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iters {
                assert!(black_box(f()));
            }
            start.elapsed().as_nanos() as f64 / f64::from(iters)
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[3]
}
