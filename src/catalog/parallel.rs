//! A catalog document at hand verified on all cores.
//!
//! Every step of [`super::verify`] is kept, with the same result; only the
//! work is shared. For a catalog of 1,000 signed entries nearly all of the
//! time is the Trust Manifests' signature checks (one each), and the rest
//! is parsing, linting and freeing the document. One helper thread per core
//! but one is started first, so that starting them overlaps the parse, and
//! each one then:
//!
//! 1. builds the values of its share of the root `entries` from the parsed
//!    document ([`crate::json::Doc::values`]; the whole input was checked
//!    as strict I-JSON first, on the calling thread, so errors are those of
//!    a serial parse), while the calling thread builds the first share;
//! 2. checks manifests, the entries it built first (their memory is in its
//!    core's cache), then any left of the others', in batches that shrink
//!    as the work runs out ([`Batches`]), while the calling thread lints the
//!    catalog and then checks manifests too;
//! 3. frees the entries it built, while the calling thread frees the first
//!    share: memory goes back to the allocator of the thread that took it,
//!    and no thread waits for another's frees.
//!
//! The walk ([`super::verify::verify_catalog_doc`]) then uses the checks
//! made (the lint and each entry's [`Pre`]) in place of doing them again.
//! A helper that fails or panics costs only speed: what it did not give
//! back is done on the calling thread. Small documents, and machines with
//! one core, are verified on the calling thread alone.

use super::verify::{
    inline_entry, parse_catalog, root_manifest, verify_catalog_doc, CatalogError, CatalogOptions,
    CatalogReport, Pre, Premade,
};
use crate::formats;
use crate::json::{self, Doc, JsonError, JsonLimits};
use crate::jws::JwsPolicy;
use crate::policy::Context;
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{OnceLock, PoisonError, RwLock};

/// Fewer root entries than this are checked on the calling thread alone:
/// sharing them would cost more than it saves.
const MIN_ENTRIES: usize = 64;

/// A document smaller than this cannot hold [`MIN_ENTRIES`] entries (each
/// needs an `identifier`, a media type and a `url` or `data`), so no helper
/// is started for it.
const MIN_BYTES: usize = 2048;

/// The threads a catalog's work is shared among: one per core, at most 16.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(16))
}

/// Verify the catalog `bytes` under `cx` (keys, algorithm allow-list) and
/// `policy` (see the module documentation); the one public way is
/// [`Verifier::verify_catalog`](crate::verifier::Verifier::verify_catalog).
///
/// # Errors
/// [`CatalogError`] when the document is too large or not strict JSON.
pub(crate) fn verify_catalog(
    cx: &Context,
    policy: &JwsPolicy,
    bytes: &[u8],
    opts: &CatalogOptions,
) -> Result<CatalogReport, CatalogError> {
    let threads = cores();
    if threads < 2 || bytes.len() < MIN_BYTES || bytes.len() > opts.max_bytes {
        return Ok(alone(cx, policy, &parse_catalog(bytes, opts)?, opts));
    }
    let shared = Shared {
        tape: OnceLock::new(),
        doc: RwLock::new(None),
        queue: OnceLock::new(),
    };
    std::thread::scope(|s| {
        let helpers: Vec<Helper> = (1..threads)
            .filter_map(|me| {
                let (commands, inbox) = channel();
                let (outbox, replies) = channel();
                let shared = &shared;
                let handle = std::thread::Builder::new()
                    .spawn_scoped(s, move || help(me, inbox, outbox, shared, cx, policy))
                    .ok()?;
                Some(Helper {
                    commands,
                    replies,
                    handle,
                })
            })
            .collect();
        let result = lead(cx, policy, bytes, opts, &shared, &helpers);
        for h in helpers {
            // Its channel closed, a helper returns; one that panicked
            // already had its work done here.
            drop(h.commands);
            let _ = h.handle.join();
        }
        result
    })
}

/// The walk of `doc` on the calling thread alone.
fn alone(cx: &Context, policy: &JwsPolicy, doc: &Value, opts: &CatalogOptions) -> CatalogReport {
    verify_catalog_doc(cx, policy, doc, opts, None, None, Premade::default())
}

/// What the calling thread and the helpers share.
struct Shared<'a> {
    /// The input, parsed and checked.
    tape: OnceLock<Doc<'a>>,
    /// The document's value while its checks run.
    doc: RwLock<Option<Value>>,
    /// The root entries not yet taken for checking.
    queue: OnceLock<Batches>,
}

/// A helper thread and the two ends of its channels.
struct Helper<'scope> {
    commands: Sender<Command>,
    replies: Receiver<Reply>,
    handle: std::thread::ScopedJoinHandle<'scope, ()>,
}

/// What the calling thread asks of a helper, in this order.
enum Command {
    /// Build the values of these nodes of the parsed input.
    Build(Vec<u32>),
    /// Check root entries from the shared queue.
    Check,
    /// Free these values (the ones it built).
    Free(Vec<Value>),
}

/// A helper's answers.
enum Reply {
    Built(Result<Vec<Value>, JsonError>),
    Checked(Vec<(usize, Option<Pre>)>),
}

/// A helper thread: answers each [`Command`] until its channel closes.
fn help(
    me: usize,
    inbox: Receiver<Command>,
    outbox: Sender<Reply>,
    shared: &Shared<'_>,
    cx: &Context,
    policy: &JwsPolicy,
) {
    while let Ok(command) = inbox.recv() {
        let reply = match command {
            Command::Build(nodes) => {
                #[cfg(test)]
                tests::HELPERS_BUILT.fetch_add(nodes.len(), Relaxed);
                Reply::Built(match shared.tape.get() {
                    Some(tape) => tape.values(&nodes),
                    None => Err(json::internal()),
                })
            }
            Command::Check => {
                let guard = shared.doc.read().unwrap_or_else(PoisonError::into_inner);
                let done = match (guard.as_ref().and_then(root_entries), shared.queue.get()) {
                    (Some(entries), Some(queue)) => check_batches(cx, policy, entries, queue, me),
                    _ => Vec::new(),
                };
                drop(guard);
                Reply::Checked(done)
            }
            Command::Free(values) => {
                #[cfg(test)]
                tests::HELPERS_FREED.fetch_add(values.len(), Relaxed);
                drop(values);
                continue;
            }
        };
        if outbox.send(reply).is_err() {
            return;
        }
    }
}

/// The root `entries` of a catalog document.
fn root_entries(doc: &Value) -> Option<&[Value]> {
    doc.get("entries")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
}

/// The calling thread's part: parse, share out the building of the root
/// entries, lint and check beside the helpers, walk, and share out the
/// freeing.
fn lead<'a>(
    cx: &Context,
    policy: &JwsPolicy,
    bytes: &'a [u8],
    opts: &CatalogOptions,
    shared: &Shared<'a>,
    helpers: &[Helper<'_>],
) -> Result<CatalogReport, CatalogError> {
    let parsed = json::parse_doc(bytes, &JsonLimits::default())?;
    let tape = shared.tape.get_or_init(|| parsed);
    let spread = tape
        .array_member("entries")
        .filter(|(_, elements)| elements.len() >= MIN_ENTRIES && !helpers.is_empty());
    let Some((array, elements)) = spread else {
        return Ok(alone(cx, policy, &tape.to_value()?, opts));
    };

    // 1. Build: share k (k >= 1) by helper k - 1, share 0 here.
    let share = elements.len().div_ceil(helpers.len() + 1).max(1);
    let shares: Vec<&[u32]> = elements.chunks(share).collect();
    for (h, part) in helpers.iter().zip(shares.iter().skip(1)) {
        // A helper that is gone has its share built here (below).
        let _ = h.commands.send(Command::Build(part.to_vec()));
    }
    let mut values = tape.values(shares.first().copied().unwrap_or(&[]))?;
    for (i, part) in shares.iter().enumerate().skip(1) {
        let built = match helpers.get(i - 1).map(|h| h.replies.recv()) {
            Some(Ok(Reply::Built(Ok(v)))) if v.len() == part.len() => v,
            _ => tape.values(part)?,
        };
        values.extend(built);
    }
    let doc = tape.with_array(array, values)?;
    *shared.doc.write().unwrap_or_else(PoisonError::into_inner) = Some(doc);

    // 2. Check: lint here first, then take entries as the helpers do.
    let guard = shared.doc.read().unwrap_or_else(PoisonError::into_inner);
    let doc = guard
        .as_ref()
        .ok_or_else(|| CatalogError::from(json::internal()))?;
    let entries = root_entries(doc).unwrap_or(&[]);
    let entries = &entries[..entries.len().min(opts.max_entries)];
    let queue = shared
        .queue
        .get_or_init(|| Batches::new(entries.len(), share, helpers.len() + 1));
    let checking: Vec<bool> = helpers
        .iter()
        .map(|h| h.commands.send(Command::Check).is_ok())
        .collect();
    let lint = formats::lint_catalog_own(doc);
    let mut manifests: Vec<Option<Pre>> = entries.iter().map(|_| None).collect();
    let mut place = |part: Vec<(usize, Option<Pre>)>| {
        for (i, pre) in part {
            if let Some(slot) = manifests.get_mut(i) {
                *slot = pre;
            }
        }
    };
    place(check_batches(cx, policy, entries, queue, 0));
    let mut lost = false;
    for (h, asked) in helpers.iter().zip(checking) {
        match asked.then(|| h.replies.recv()) {
            Some(Ok(Reply::Checked(part))) => place(part),
            _ => lost = true,
        }
    }
    // A helper that panicked took entries it never gave back: the walk
    // checks every entry on this thread (and so reports any panic here).
    if lost {
        manifests.clear();
    }
    let premade = Premade {
        lint: Some(lint),
        manifests,
    };
    let report = verify_catalog_doc(cx, policy, doc, opts, None, None, premade);
    drop(guard);

    // 3. Free: each share by the thread that built it.
    let doc = shared
        .doc
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some(Value::Object(mut top)) = doc {
        if let Some(Value::Array(mut entries)) = top.remove("entries") {
            for (i, h) in helpers.iter().enumerate().rev() {
                let at = (i + 1) * share;
                if at < entries.len() {
                    let part = entries.split_off(at);
                    // A helper that is gone: the part is freed here.
                    let _ = h.commands.send(Command::Free(part));
                }
            }
        }
    }
    Ok(report)
}

/// The root entries still to check, in one region per thread: region `t`
/// holds the entries thread `t` built (their memory is in its core's
/// cache), and thread `t` takes from it first, then from the others in
/// turn. A batch is an eighth of what is left of a region's share (at
/// least one entry, at most 16), so batches are large while there is much
/// to do and single entries at the end, where no core should wait for
/// another's long batch.
struct Batches {
    /// The next entry of each region.
    next: Vec<AtomicUsize>,
    /// The entries of each region: `share * t .. share * (t + 1)`.
    share: usize,
    len: usize,
}

impl Batches {
    fn new(len: usize, share: usize, threads: usize) -> Batches {
        let share = share.max(1);
        Batches {
            next: (0..threads.max(1))
                .map(|t| AtomicUsize::new(t * share))
                .collect(),
            share,
            len,
        }
    }

    /// The next batch of entry indices for thread `me`, or `None` when all
    /// are taken.
    fn take(&self, me: usize) -> Option<std::ops::Range<usize>> {
        let regions = self.next.len();
        (0..regions).find_map(|k| {
            let r = (me + k) % regions;
            let next = self.next.get(r)?;
            let end = (self.share * (r + 1)).min(self.len);
            let left = end.saturating_sub(next.load(Relaxed));
            if left == 0 {
                return None;
            }
            let size = (left / 8).clamp(1, 16);
            let at = next.fetch_add(size, Relaxed);
            (at < end).then(|| at..(at + size).min(end))
        })
    }
}

/// The checks of every batch a worker takes, by entry index: the entry's
/// manifest ([`root_manifest`]), and the whole entry when it needs nothing
/// of the walk ([`inline_entry`]).
fn check_batches(
    cx: &Context,
    policy: &JwsPolicy,
    entries: &[Value],
    queue: &Batches,
    me: usize,
) -> Vec<(usize, Option<Pre>)> {
    let mut done = Vec::new();
    while let Some(batch) = queue.take(me) {
        for i in batch {
            let Some(e) = entries.get(i) else { break };
            let pre = root_manifest(cx, policy, e).map(|m| match e.as_object() {
                Some(o) => match inline_entry(cx, policy, o, format!("/entries/{i}"), 1, m) {
                    Ok(r) => Pre::Entry(Box::new(r)),
                    Err((m, _)) => Pre::Manifest(m),
                },
                None => Pre::Manifest(m),
            });
            done.push((i, pre));
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trust::{KeySource, StaticKeys};
    use crate::{Algorithm, SigningKey, Verifier};

    /// Root entries whose values a helper built, and freed (all tests).
    pub(super) static HELPERS_BUILT: AtomicUsize = AtomicUsize::new(0);
    pub(super) static HELPERS_FREED: AtomicUsize = AtomicUsize::new(0);

    /// On more than one core, a large catalog's entries are built and
    /// freed by the helpers too, not by the calling thread alone, and every
    /// entry gets its result.
    #[test]
    fn helpers_build_and_free_a_share_of_the_entries() {
        let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).expect("key");
        let entries: Vec<Value> = (0..200)
            .map(|i| {
                serde_json::json!({"identifier": format!("urn:e:{i}"), "displayName": "E",
                    "mediaType": "application/vnd.x+json", "data": {"n": i}})
            })
            .collect();
        let mut doc = serde_json::json!({"specVersion": "1.0", "entries": entries});
        crate::catalog::sign_catalog(&mut doc, &key, &crate::catalog::SignTarget::Every)
            .expect("sign");
        let bytes = serde_json::to_vec(&doc).expect("json");
        let v = Verifier::builder(
            StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned),
        )
        .build();
        let built = HELPERS_BUILT.load(Relaxed);
        let freed = HELPERS_FREED.load(Relaxed);
        let r = v
            .verify_catalog(&bytes, &CatalogOptions::default().require_signed(true))
            .expect("catalog");
        assert!(r.verified(), "{:?}", r.first_failure());
        assert_eq!(r.entries.len(), 200);
        if cores() > 1 {
            assert!(HELPERS_BUILT.load(Relaxed) - built >= 200 / cores());
            assert!(HELPERS_FREED.load(Relaxed) - freed >= 200 / cores());
        }
    }
}
