//! The state of a verification crawl shared by a fleet of workers, held in
//! Redis Streams (one server, Cluster or Sentinel, through the same client
//! as the replay store: [`crate::replay::redis`]). This layer stores inputs,
//! results and leases as bytes and counters; it parses no report and
//! decides nothing about a verdict (the worker, `agentsig::net::crawl`,
//! does).
//!
//! # Keys
//! Every key of the crawl `NAME` is `agentsig:crawl:{NAME}:...`: the hash
//! tag `{NAME}` puts them all in one Redis Cluster slot, so each Lua script
//! below runs atomically on one node (Redis Cluster specification, "Hash
//! tags").
//! * `inputs:0` to `inputs:63`: the input streams, [`SHARDS`](crate::replay::stream::SHARDS) of them; an
//!   input goes to the one of its host ([`shard_of`](crate::replay::stream::shard_of)), so that all of a
//!   host's inputs are in one stream. Each entry holds `id` (the SHA-256 of
//!   the input, hex, 32 characters), `input`, `depth` (0 for an input added
//!   by an operator, one more per catalog level) and `attempt`. The
//!   consumer group `workers` of each stream hands each entry to one worker
//!   (`XREADGROUP ... >`); an entry stays pending until that worker
//!   acknowledges it, and one pending longer than the lease is taken over
//!   by another worker (`XAUTOCLAIM`), so a worker killed mid-input loses
//!   nothing. An acknowledged entry leaves its stream by a trim below the
//!   stream's oldest pending entry (`XTRIM MINID`), once every older one is
//!   acknowledged. A worker reads the streams it is given first
//!   ([`CrawlQueue::finish_and_take`](crate::replay::stream::CrawlQueue::finish_and_take)):
//!   the crawl worker reads only its own share of them, shared out among
//!   the live workers ([`CrawlQueue::members`](crate::replay::stream::CrawlQueue::members),
//!   [`own_shards`](crate::replay::stream::own_shards)), so that all of a
//!   host's inputs go to the one worker that holds its connections and
//!   their permits.
//! * `members`: the live workers (a sorted set of consumer names scored by
//!   the end of their heartbeat's lease).
//! * `results`: the result stream; one entry per input (`input`, and
//!   `report`: the JSON report, which carries the verdict, the reason code,
//!   the input id in `details.crawl_input` and the attempts in
//!   `details.crawl_attempts`), until a reader takes it out once written
//!   elsewhere ([`CrawlQueue::remove_results`](crate::replay::stream::CrawlQueue::remove_results)).
//! * `done`: hash from input id to its result's stream id: the idempotency
//!   record. The finishing script writes a result only when the input has
//!   none, in the same script as the `XADD` and the `XACK`, so a replayed
//!   or duplicated queue entry, or an input finished by two workers after
//!   a lease ran out, gives one result. One call of the script finishes
//!   several entries (a worker thread's batch), each by that rule, and
//!   takes the thread's next entries ([`CrawlQueue::finish_and_take`](crate::replay::stream::CrawlQueue::finish_and_take)).
//! * `seen`: set of the input ids ever queued (an input added twice, or a
//!   catalog entry found twice, is queued once).
//! * `tries`, `why`: attempts started per input, and the reason of its last
//!   failed attempt (a bounded retry ends in a result carrying that reason);
//!   `postponed`: per input, the attempts put off without counting because
//!   no connection permit came ([`CrawlQueue::postpone`](crate::replay::stream::CrawlQueue::postpone)).
//! * Each of `done`, `tries`, `why` and `postponed` also holds the field
//!   `~`, whose long value keeps it a hash table rather than a listpack
//!   searched field by field (`CREATE`).
//! * `stats`: counters (`verdict:WORD`, `code:CODE`, `queued`, `retried`,
//!   `reclaimed`, `removed`, and `waits` and `waited_ms`: the waits for a
//!   connection permit and the milliseconds spent in them); `waits:ms`: a
//!   sorted set of the hosts whose fetches waited for a permit, scored by
//!   the milliseconds they spent waiting, and `waits:n`: per host, the
//!   number of such waits.
//! * `recent`: the stream ids (write times) of the newest 1000 results
//!   taken out of `results`, for the rate `crawl status` shows.
//! * `state`: `stopped` while the crawl is stopped.
//! * `host:HASH` (a sorted set of permit tokens scored by their lease's end)
//!   and `next:HASH` (the earliest time of the next connection): the
//!   fleet-wide per-host connection bound and request rate.
//!
//! # Exactly one result, across a failover
//! A script's writes replicate as one unit (`MULTI`/`EXEC` effects), so a
//! replica has either the result, its `done` record and the
//! acknowledgement, or none of them. A failover that loses the finishing
//! script leaves the entry pending on the promoted replica: it is claimed
//! after the lease and finished again, once. With acknowledged writes
//! (`?wait=N` on the URL: Redis `WAIT` after each finishing script) a
//! worker moves on only once N replicas have the result.
//!
//! # Fail closed
//! Every failure is [`ReplayError::Unavailable`]. A worker that cannot
//! reach Redis takes no input, opens no connection (no permit), and
//! acknowledges nothing.

use super::redis::{always, RedisClient, RedisConfig, Reply};
use super::ReplayError;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// The consumer group of the workers.
pub const GROUP: &str = "workers";
/// The longest crawl name.
pub const MAX_NAME: usize = 64;
/// The longest input (a URL or an origin).
pub const MAX_INPUT: usize = 8 * 1024;
/// The largest report stored for one input.
pub const MAX_REPORT: usize = 256 * 1024;

/// How many input streams a crawl has (`inputs:0` to `inputs:63`): the
/// inputs of one host are in one of them ([`shard_of`]). More streams than
/// workers, so that every worker of a fleet of up to 64 has streams of its
/// own, in shares that differ by at most one.
pub const SHARDS: usize = 64;

/// The host of an input as a fetch names it: the authority of a URL (or
/// the text before the first `/`, `?` or `#` of an origin written without
/// a scheme), without user information and without the default port 443,
/// lowercased.
fn input_host(input: &str) -> String {
    let rest = input.split_once("://").map_or(input, |(_, r)| r);
    let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = host.strip_suffix(":443").unwrap_or(host);
    host.to_ascii_lowercase()
}

/// The input stream of `input` (0 to [`SHARDS`] - 1): from the SHA-256 of
/// its host (the authority of a URL, lowercased, without user information
/// or the default port 443), the same on every worker and every build, so
/// that all inputs of one host share a stream. Which stream an input is in
/// decides only which worker takes it, never whether it gets its one
/// result.
pub fn shard_of(input: &str) -> u16 {
    let d = Sha256::digest(input_host(input).as_bytes());
    // SHARDS divides 65,536: every stream is as likely.
    u16::from_be_bytes([d[0], d[1]]) % (SHARDS as u16)
}

/// One input taken from the queue.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CrawlEntry {
    /// The entry's stream id (`1700000000000-0`), unique in its stream.
    pub entry: String,
    /// The input stream it was read from (`inputs:N`, [`SHARDS`]).
    pub shard: u16,
    /// The input's id (hex SHA-256 of the input, 32 characters).
    pub id: String,
    /// The input (a URL or an origin).
    pub input: String,
    /// Catalog depth: 0 for an input an operator added.
    pub depth: u32,
    /// Attempts before this entry was queued (0 for a first try).
    pub attempt: u32,
}

/// What the finishing script did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finished {
    /// The result was written and the entry acknowledged.
    Written,
    /// The input already had a result: nothing written, the entry
    /// acknowledged (a duplicate).
    Duplicate,
}

/// A result to record for one input: bytes and labels, as the worker
/// decided them.
#[derive(Clone, Copy, Debug)]
pub struct ResultRecord<'a> {
    /// The report, JSON.
    pub report: &'a [u8],
    /// The verdict word, counted in the statistics.
    pub verdict: &'a str,
    /// The reason code (empty when none), counted in the statistics.
    pub code: &'a str,
}

/// One input's result to record with [`CrawlQueue::finish_and_take`].
#[derive(Clone, Copy, Debug)]
pub struct Finishing<'a> {
    /// The entry it finishes.
    pub entry: &'a CrawlEntry,
    /// Its result.
    pub result: ResultRecord<'a>,
    /// Catalog entries found, queued at `entry.depth + 1` (each input once
    /// in the crawl's life).
    pub children: &'a [String],
}

/// What [`CrawlQueue::finish_and_take`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FinishedAndTaken {
    /// Per result given, in order: written, or a duplicate.
    pub finished: Vec<Finished>,
    /// The entries taken, each with its attempt started (`None`: the input
    /// has a result already and the entry was acknowledged).
    pub taken: Vec<(CrawlEntry, Option<u32>)>,
    /// The crawl is stopped: nothing was taken.
    pub stopped: bool,
}

/// A permit request's answer ([`CrawlQueue::host_acquire`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Permit {
    /// Granted: the holder may open one connection.
    Granted,
    /// Every permit of the host is held; ask again shortly.
    Full,
    /// The host's request rate or a `Retry-After` allows the next
    /// connection only in this many milliseconds.
    NotBefore(u64),
}

/// The figures `agentsig crawl status` shows.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct CrawlStatus {
    /// Entries in the input streams not yet finished (waiting or pending),
    /// and those finished after an older entry of their stream still
    /// pending: an acknowledged entry leaves its stream once every older
    /// one of the stream is acknowledged (a few takes' worth while the
    /// workers live; behind an entry held by a worker that died, those
    /// finished until it is taken over, within the lease).
    pub queued: u64,
    /// Entries handed to a worker and not yet acknowledged.
    pub pending: u64,
    /// Pending entries per worker.
    pub pending_by_worker: Vec<(String, u64)>,
    /// Results written: those in the results stream and those taken out
    /// of it ([`CrawlQueue::remove_results`]).
    pub results: u64,
    /// Results taken out of the results stream once written elsewhere
    /// ([`CrawlQueue::remove_results`]).
    pub results_removed: u64,
    /// Inputs ever queued.
    pub inputs: u64,
    /// Results per second over the last (at most 1000) results, those in
    /// the results stream and those taken out of it, and the milliseconds
    /// since the last one.
    pub recent_rate: Option<(f64, u64)>,
    /// The counters (`verdict:WORD`, `code:CODE`, `queued`, `retried`,
    /// `reclaimed`, `removed`, `waits`, `waited_ms`).
    pub counters: Vec<(String, i64)>,
    /// Per host: milliseconds spent waiting for a permit, and the number of
    /// waits; the [`STATUS_HOSTS`] hosts that waited longest, longest
    /// first.
    pub host_waits: Vec<(String, u64, u64)>,
    /// The number of hosts whose fetches ever waited for a permit.
    pub hosts_waited: u64,
    /// Whether the crawl is stopped.
    pub stopped: bool,
    /// The live workers ([`CrawlQueue::members`]), each with the number of
    /// input streams of its own ([`own_shards`]) and the entries in them
    /// (waiting or pending).
    pub workers: Vec<(String, usize, u64)>,
    /// The reader that holds the right to take results out
    /// ([`CrawlQueue::hold_remover`]), as it named itself, if any.
    pub results_reader: Option<String>,
}

/// The state of one crawl (see the module documentation). Cheap to share
/// behind an `Arc`: each thread takes its own pooled connection.
#[derive(Debug)]
pub struct CrawlQueue {
    client: RedisClient,
    prefix: String,
    /// The keys of the input streams, `inputs:0` to `inputs:63`.
    shards: Vec<Vec<u8>>,
    /// Their numbers as the scripts' arguments, made once (not per input
    /// or call).
    numbers: Vec<String>,
}

/// Whether `name` can name a crawl: 1 to [`MAX_NAME`] characters of
/// `A-Z a-z 0-9 . _ -` (it is inside braces in every key of the crawl, so
/// that they share one Redis Cluster slot). `Err`: why not, in words.
///
/// ```
/// use agentsig::replay::stream::check_crawl_name;
/// assert!(check_crawl_name("daily-2026.12.04").is_ok());
/// assert!(check_crawl_name("a}b").is_err());
/// ```
///
/// # Errors
/// The reason, when `name` is refused.
pub fn check_crawl_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "crawl name {:?}: 1 to {MAX_NAME} characters of A-Z a-z 0-9 . _ -",
            crate::text::escape_controls(&name.chars().take(80).collect::<String>())
        ))
    }
}

/// The id of an input: hex of the first 16 bytes of its SHA-256.
pub fn input_id(input: &str) -> String {
    lower_hex(&Sha256::digest(input.as_bytes())[..16])
}

/// Lowercase hex of `bytes`, written into one string of the final size
/// (the ids and key suffixes are made per input: no string per byte).
fn lower_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    s
}

/// The key suffix of a host (`host:port`): the hex SHA-256 of its text, so
/// a hostile host name cannot inject into the key space.
fn host_hash(host: &str) -> String {
    lower_hex(&Sha256::digest(host.as_bytes())[..12])
}

/// Adds inputs not seen before: KEYS = seen, stats, then the input streams
/// (`inputs:0` first); ARGV = quadruples (id, input, depth, stream number).
/// Returns how many were queued.
static ADD: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        "local n = 0
for i = 1, #ARGV, 4 do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then
    redis.call('XADD', KEYS[3 + tonumber(ARGV[i+3])], '*', 'id', ARGV[i], 'input', ARGV[i+1], 'depth', ARGV[i+2], 'attempt', '0')
    n = n + 1
  end
end
if n > 0 then redis.call('HINCRBY', KEYS[2], 'queued', n) end
return n
",
    )
});

/// The crawl's hashes keyed by input id, looked up in batches by every
/// take and finish ([`CREATE`]).
const BY_ID: [&str; 4] = ["done", "tries", "why", "postponed"];

/// The field that keeps each of [`BY_ID`] a hash table ([`CREATE`]): no
/// input id (32 hex digits) is `~`.
const HASHTABLE_FIELD: &str = "~";

/// [`HASHTABLE_FIELD`]'s value: says why it is there, in more bytes than a
/// listpack keeps.
const HASHTABLE_NOTE: &str = "agentsig: a value longer than hash-max-listpack-value, so that this \
hash stays a hash table (constant-time lookups by input id) rather than a listpack searched field by field";

/// Creates the crawl: KEYS = the hashes keyed by input id ([`BY_ID`]), then
/// the input streams. Each hash gets the field [`HASHTABLE_FIELD`], whose
/// value ([`HASHTABLE_NOTE`]) is longer than Redis keeps in a listpack
/// (`hash-max-listpack-value`, 64 bytes by default), so the hash is a hash
/// table from its first field on: a listpack (Redis's encoding for a hash
/// of up to `hash-max-listpack-entries` fields, 512 by default) is searched
/// field by field, and every take and finish looks up a batch of ids in
/// these hashes. Redis never turns a hash table back into a listpack, and
/// the long value keeps it one across a restart. Then each stream's
/// consumer group (and the stream) is made, a group already there left as
/// it is. ARGV = group, the field, its value, the number of streams.
static CREATE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        "local hashes = #KEYS - tonumber(ARGV[4])
for i = 1, hashes do redis.call('HSET', KEYS[i], ARGV[2], ARGV[3]) end
for i = hashes + 1, #KEYS do
  local k = KEYS[i]
  local r = redis.pcall('XGROUP', 'CREATE', k, ARGV[1], '0', 'MKSTREAM')
  if type(r) == 'table' and r.err and not string.find(r.err, 'BUSYGROUP') then
    return redis.error_reply(r.err)
  end
end
return 1
",
    )
});

/// The entries in the input streams given in KEYS, summed; with ARGV[1]
/// `any`, 1 at the first stream that is not empty (its `XLEN`s stop
/// there), else 0.
static QUEUED: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        "local n, any = 0, ARGV[1] == 'any'
for _, k in ipairs(KEYS) do
  local l = redis.call('XLEN', k)
  if any and l > 0 then return 1 end
  n = n + l
end
return n
",
    )
});

/// The input streams' figures for [`CrawlQueue::status`], in one round
/// trip rather than one per stream: KEYS = the input streams; ARGV =
/// group. Returns per stream, in KEYS' order, `[entries, pending,
/// [[consumer, pending], ...]]` (`XLEN`, then the summary form of
/// `XPENDING`; a stream without the group has none pending).
static STREAM_FIGURES: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        "local out = {}
for i, k in ipairs(KEYS) do
  local p = redis.pcall('XPENDING', k, ARGV[1])
  if type(p) ~= 'table' or p.err then p = {0, false, false, false} end
  out[i] = {redis.call('XLEN', k), p[1], p[4] or {}}
end
return out
",
    )
});

/// Takes over up to ARGV[4] entries pending longer than ARGV[3] ms with
/// any worker (`XAUTOCLAIM`): KEYS = stats, then the input streams;
/// ARGV = group, consumer, lease ms, most, first stream to look at (the
/// streams are looked at in turn from it). Returns `[stream number,
/// entry]` pairs, and counts them as `reclaimed`.
static CLAIM: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        "local s, most, first = #KEYS - 1, tonumber(ARGV[4]), tonumber(ARGV[5])
local out, n = {}, 0
for o = 0, s - 1 do
  local x = (first + o) % s
  local r = redis.call('XAUTOCLAIM', KEYS[2 + x], ARGV[1], ARGV[2], ARGV[3], '0-0', 'COUNT', most - n)
  for _, e in ipairs(r[2]) do
    n = n + 1
    out[n] = {x, e}
  end
  if n >= most then break end
end
if n > 0 then redis.call('HINCRBY', KEYS[1], 'reclaimed', n) end
return out
",
    )
});

/// Restarts the idle time of entries a worker holds (`XCLAIM ... 0
/// JUSTID`): KEYS = the input streams; ARGV = group, consumer, then pairs
/// (stream number, entry id).
static RENEW_HELD: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        "local by = {}
for i = 3, #ARGV, 2 do
  local x = tonumber(ARGV[i])
  by[x] = by[x] or {}
  table.insert(by[x], ARGV[i + 1])
end
for x, ids in pairs(by) do
  -- In slices: Lua's unpack is bounded.
  for s = 1, #ids, 500 do
    local args = {}
    for k = s, math.min(s + 499, #ids) do args[#args + 1] = ids[k] end
    args[#args + 1] = 'JUSTID'
    redis.call('XCLAIM', KEYS[1 + x], ARGV[1], ARGV[2], '0', unpack(args))
  end
end
return 1
",
    )
});

/// A worker's heartbeat in the fleet: KEYS = members; ARGV = consumer,
/// lease ms (0: the worker leaves). Ends the leases run out, then returns
/// the live workers' names. The server's clock (`TIME`) is the one clock.
static MEMBERS: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        "local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[2])
if lease > 0 then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZRANGE', KEYS[1], 0, -1)
",
    )
});

/// The Lua function `trim(key, group)` the scripts that acknowledge entries
/// start with: an acknowledged entry leaves its input stream by a trim of
/// the stream below the first id it must keep (`XTRIM MINID`), its oldest
/// entry pending with any worker or, none pending, the one after the last
/// the group was given; entries after an older one still pending stay
/// until it is acknowledged. One trim per stream and call, where an
/// `XDEL` per entry sought each entry from the start of its listpack
/// node, past those deleted before it: a fifth of the finishing script's
/// instructions (valgrind's count, `docs/crawl.md`).
macro_rules! trim_lua {
    () => {
        "local function trim(key, group)
  -- A stream gone (a crawl deleted under a running worker) is left as it
  -- is: an error here would fail the script after its writes.
  -- The oldest pending entry (`XPENDING` with a range: a seek, where the
  -- summary form walks every consumer the group ever had).
  local p = redis.pcall('XPENDING', key, group, '-', '+', 1)
  if type(p) ~= 'table' or p.err then return end
  local from = p[1] and p[1][1]
  if not from then
    for _, g in ipairs(redis.call('XINFO', 'GROUPS', key)) do
      local name, last
      for k = 1, #g - 1, 2 do
        if g[k] == 'name' then name = g[k + 1] end
        if g[k] == 'last-delivered-id' then last = g[k + 1] end
      end
      if name == group and last then
        local ms, seq = string.match(last, '^(%d+)-(%d+)$')
        -- A sequence past Lua's exact integers is left to a later trim.
        if ms and #seq < 15 then from = ms .. '-' .. (tonumber(seq) + 1) end
      end
    end
  end
  if from then redis.call('XTRIM', key, 'MINID', from) end
end
"
    };
}

/// Starts an attempt: KEYS = done, tries, the entry's input stream; ARGV =
/// id, entry, group.
/// An input with a result already is acknowledged and -1 returned; else
/// the attempts started so far, this one included.
static START: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(concat!(
        trim_lua!(),
        "if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('XACK', KEYS[3], ARGV[3], ARGV[2])
  trim(KEYS[3], ARGV[3])
  return -1
end
return redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
"
    ))
});

/// Finishes a thread's inputs, then takes its next ones, in one step (each
/// part may be empty): KEYS = done, results, stats, seen, tries, why,
/// state, then the input streams (`inputs:0` first); ARGV = group,
/// consumer, most to take, results to record, the streams to read in the
/// order to read them (one byte each, the stream's number), then per
/// result 9 fields (id, entry, its stream, input,
/// report, verdict, code, depth of its children, number of children) and
/// its children as (id, input, stream) triples.
///
/// Each result is written only when its input has none (neither in `done`
/// nor earlier in the same call) as an entry of the results stream with
/// two fields, `input` and `report` (the report holds the rest: verdict,
/// reason code, `details.crawl_input`, `details.crawl_attempts`; every
/// byte of an entry is copied into the stream and the append-only file),
/// with its `done` record, its counters and
/// its children not seen before queued, and its entry acknowledged (and
/// trimmed from its stream, `trim_lua!`) either way: the script runs as one unit, so every result in it
/// is written atomically with its acknowledgement. Then, unless the crawl
/// is stopped, up to the most new entries are read for the consumer from
/// the streams given, in their order; an attempt is started at each (an input that has a
/// result already is only acknowledged). The commands are per call and
/// stream, not per input, where Redis takes many fields or ids at once
/// (`HMGET`, `HSET`, `HDEL`, `XACK`, `XTRIM`, one `HINCRBY` per verdict and
/// code): only a result's `XADD` and a child's `SADD`/`XADD` are per item.
/// Returns one bulk string, the MessagePack values `written`, `taken` and
/// `stopped` one after the other (Redis Lua scripting's `cmsgpack.pack`,
/// there since Redis 2.6): `written` per result 1 (written) or 0 (a
/// duplicate, only acknowledged); `taken` per entry taken `[entry id,
/// fields, n, stream]`, n the attempts started at its input, this one
/// included, or -1 (a duplicate, acknowledged); `stopped` 1 when the crawl
/// is stopped (nothing taken). Packed, the reply is one string that Redis
/// copies out as it is and the worker reads value by value
/// ([`read_finish_take`]); as nested arrays, Redis converted every table
/// and field into its reply, and the worker's client parsed each into a
/// value of its own, allocations per field of every entry.
static FINISH_TAKE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(concat!(
        trim_lua!(),
        "local group, consumer = ARGV[1], ARGV[2]
local count, n, order = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local reads = #order
local streams = #KEYS - 7
local call, unpack = redis.call, unpack
-- One command over many fields or ids: at once when they are few (the
-- usual case: a thread's batch), else in slices (Lua's unpack is bounded).
local function many(cmd, key, pre, list)
  if #list <= 500 then
    if pre then return call(cmd, key, pre, unpack(list)) end
    return call(cmd, key, unpack(list))
  end
  local r = {}
  for s = 1, #list, 500 do
    local args, a = {}, 0
    if pre then args[1], a = pre, 1 end
    for k = s, math.min(s + 499, #list) do a = a + 1; args[a] = list[k] end
    local part = call(cmd, key, unpack(args))
    if type(part) == 'table' then
      for k = 1, #part do r[s + k - 1] = part[k] end
    end
  end
  return r
end
-- A number sent as text, converted once per call: Lua's tonumber parses
-- with strtod, about a thousand instructions a number, and the same few
-- (stream numbers, counts of children) come with every result.
local nums = {}
local function num(s)
  local v = nums[s]
  if v == nil then
    v = tonumber(s)
    nums[s] = v
  end
  return v
end
-- The key of stream number x (0-based), refused outside the crawl's.
local function stream(x)
  if not x or x < 0 or x >= streams or x % 1 ~= 0 then
    return error('no input stream ' .. tostring(x))
  end
  return KEYS[8 + x]
end
local written = {}
local ids, at = {}, {}
-- Every stream number is checked before the first write (a script's
-- writes before an error stay).
for o = 1, reads do stream(string.byte(order, o)) end
local i = 6
for r = 1, n do
  ids[r], at[r] = ARGV[i], i
  stream(num(ARGV[i + 2]))
  local c = num(ARGV[i + 8])
  for j = i + 9, i + 8 + 3 * c, 3 do stream(num(ARGV[j + 2])) end
  i = i + 9 + 3 * c
end
local had = n > 0 and many('HMGET', KEYS[1], nil, ids) or {}
local fresh, records, finished, acks, counts = {}, {}, {}, {}, {}
local nr, nf, q = 0, 0, 0
local function ack(x, entry)
  local a = acks[x]
  if not a then a = {}; acks[x] = a end
  a[#a + 1] = entry
end
for r = 1, n do
  local i, id = at[r], ids[r]
  local w = 0
  if not had[r] and not fresh[id] then
    local rid = call('XADD', KEYS[2], '*', 'input', ARGV[i + 3], 'report', ARGV[i + 4])
    fresh[id] = true
    records[nr + 1], records[nr + 2], nr = id, rid, nr + 2
    nf = nf + 1
    finished[nf] = id
    local v = 'verdict:' .. ARGV[i + 5]
    counts[v] = (counts[v] or 0) + 1
    if ARGV[i + 6] ~= '' then
      local c = 'code:' .. ARGV[i + 6]
      counts[c] = (counts[c] or 0) + 1
    end
    local last = i + 8 + 3 * num(ARGV[i + 8])
    for j = i + 9, last, 3 do
      if call('SADD', KEYS[4], ARGV[j]) == 1 then
        call('XADD', stream(num(ARGV[j + 2])), '*', 'id', ARGV[j], 'input', ARGV[j + 1], 'depth', ARGV[i + 7], 'attempt', '0')
        q = q + 1
      end
    end
    w = 1
  end
  ack(num(ARGV[i + 2]), ARGV[i + 1])
  written[r] = w
end
if nr > 0 then
  many('HSET', KEYS[1], nil, records)
  for k, c in pairs(counts) do call('HINCRBY', KEYS[3], k, c) end
  many('HDEL', KEYS[5], nil, finished)
  many('HDEL', KEYS[6], nil, finished)
end
if q > 0 then call('HINCRBY', KEYS[3], 'queued', q) end
local taken = {}
local stopped = 0
if count > 0 then
  if call('GET', KEYS[7]) == 'stopped' then
    stopped = 1
  else
    local es, from, got = {}, {}, 0
    for o = 1, reads do
      if got >= count then break end
      local x = string.byte(order, o)
      local key = stream(x)
      -- An empty stream is passed over at the cost of an XLEN, a tenth of
      -- an XREADGROUP's (a worker's share is many streams, few busy).
      local r = call('XLEN', key) > 0 and call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', count - got, 'STREAMS', key, '>')
      if r then
        for _, e in ipairs(r[1][2]) do
          got = got + 1
          es[got], from[got] = e, x
        end
      end
    end
    local tids, tix, nt = {}, {}, 0
    for x, e in ipairs(es) do
      local f = e[2]
      if f then
        for k = 1, #f, 2 do
          if f[k] == 'id' then
            nt = nt + 1
            tids[nt] = f[k + 1]
            tix[x] = nt
          end
        end
      end
    end
    local tdone, t = {}, {}
    if nt > 0 then
      tdone, t = many('HMGET', KEYS[1], nil, tids), many('HMGET', KEYS[5], nil, tids)
    end
    local tries = {}
    for k = 1, nt do tries[tids[k]] = tonumber(t[k]) or 0 end
    local started = {}
    for x, e in ipairs(es) do
      local t = -2
      local k = tix[x]
      if k then
        local id = tids[k]
        if tdone[k] then
          ack(from[x], e[1])
          t = -1
        else
          tries[id] = tries[id] + 1
          started[id] = tries[id]
          t = tries[id]
        end
      end
      taken[x] = {e[1], e[2] or {}, t, from[x]}
    end
    local set, ns = {}, 0
    for id, t in pairs(started) do
      set[ns + 1], set[ns + 2], ns = id, t, ns + 2
    end
    if ns > 0 then many('HSET', KEYS[5], nil, set) end
  end
end
for x, list in pairs(acks) do
  local key = stream(x)
  many('XACK', key, group, list)
  trim(key, group)
end
return cmsgpack.pack(written, taken, stopped)
"
    ))
});

/// Takes results out of the results stream: KEYS = results, stats,
/// recent; ARGV = how many ids `recent` keeps ([`RECENT`]), then the
/// results' stream ids, oldest first. Returns the entries deleted, also
/// counted as `removed`, in the same unit; their ids (the times they were
/// written) are kept in `recent`, the newest of them, for the rate `crawl
/// status` shows.
static REMOVE_RESULTS: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        "local n = redis.call('XDEL', KEYS[1], unpack(ARGV, 2))
if n > 0 then redis.call('HINCRBY', KEYS[2], 'removed', n) end
redis.call('LPUSH', KEYS[3], unpack(ARGV, 2))
redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[1]) - 1)
return n
",
    )
});

/// The one reader that takes results out of a crawl ([`CrawlQueue::hold_remover`]):
/// KEYS = remover; ARGV = holder, lease ms (`0`: give the hold back).
/// Returns "" when `holder` holds it now (taken, renewed or given back),
/// else the other holder's name.
static REMOVER: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        "local h = redis.call('GET', KEYS[1])
if ARGV[2] == '0' then
  if h == ARGV[1] then redis.call('DEL', KEYS[1]) end
  return ''
end
if h and h ~= ARGV[1] then return h end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ''
",
    )
});

/// How many of the newest results the rate of [`CrawlQueue::status`] is
/// taken over (those in the results stream and those taken out of it).
const RECENT: usize = 1000;

/// Queues another attempt: KEYS = the entry's input stream, why, stats,
/// done, the input's stream now ([`shard_of`]); ARGV = id, entry, group,
/// input, depth, attempt, reason. The new entry and the acknowledgement of
/// the old one are one unit; an input that has a result meanwhile is only
/// acknowledged.
static RETRY: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(concat!(
        trim_lua!(),
        "if redis.call('HEXISTS', KEYS[4], ARGV[1]) == 0 then
  redis.call('XADD', KEYS[5], '*', 'id', ARGV[1], 'input', ARGV[4], 'depth', ARGV[5], 'attempt', ARGV[6])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[7])
  redis.call('HINCRBY', KEYS[3], 'retried', 1)
end
redis.call('XACK', KEYS[1], ARGV[3], ARGV[2])
trim(KEYS[1], ARGV[3])
return 1
"
    ))
});

/// Puts an attempt off without counting it: KEYS = the entry's input
/// stream, why, stats, done, postponed, tries, the input's stream now
/// ([`shard_of`]); ARGV = id, entry, group, input, depth, attempt, reason,
/// most put off. Past the most, nothing is written and 0 returned (the
/// attempt counts: the caller retries it). Else the attempt started is
/// taken back from `tries`, the entry queued again as it was, the old one
/// acknowledged, all as one unit; 1 returned (also for an input that has a
/// result meanwhile, only acknowledged).
static POSTPONE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(concat!(
        trim_lua!(),
        "if redis.call('HEXISTS', KEYS[4], ARGV[1]) == 0 then
  if redis.call('HINCRBY', KEYS[5], ARGV[1], 1) > tonumber(ARGV[8]) then return 0 end
  redis.call('HINCRBY', KEYS[6], ARGV[1], -1)
  redis.call('XADD', KEYS[7], '*', 'id', ARGV[1], 'input', ARGV[4], 'depth', ARGV[5], 'attempt', ARGV[6])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[7])
  redis.call('HINCRBY', KEYS[3], 'postponed', 1)
end
redis.call('XACK', KEYS[1], ARGV[3], ARGV[2])
trim(KEYS[1], ARGV[3])
return 1
"
    ))
});

/// A connection permit: KEYS = host set, next time, wanted flag; ARGV =
/// token, limit, interval ms, lease ms, starved (1: the asker holds no
/// usable permit of the host). The server's clock (`TIME`) is the one
/// clock of the fleet. Returns 0 (granted), -1 (full: for a starved asker
/// the wanted flag is then set for a second, so that holders keeping
/// permits give them back, [`CrawlQueue::host_wanted`]) or the
/// milliseconds until the next connection may start.
static ACQUIRE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        "local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local nb = tonumber(redis.call('GET', KEYS[2]) or '0')
if nb > now then return nb - now end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  if ARGV[5] == '1' then redis.call('SET', KEYS[3], '1', 'PX', 1000) end
  return -1
end
local lease = tonumber(ARGV[4])
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease + 1000)
local iv = tonumber(ARGV[3])
if iv > 0 then redis.call('SET', KEYS[2], now + iv, 'PX', iv + 1000) end
return 0
",
    )
});

/// Gives a permit back: KEYS = host set, next time, wake list; ARGV =
/// token (empty: none, only the delay), delay ms (a `Retry-After`; 0:
/// none), limit. The host's next connection is put off by the delay (never
/// brought forward); a permit given back wakes one worker waiting for the
/// host (`BLPOP` on the wake list, which holds at most `limit` wakes).
static RELEASE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        "if ARGV[1] ~= '' and redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  redis.call('RPUSH', KEYS[3], '1')
  redis.call('LTRIM', KEYS[3], -tonumber(ARGV[3]), -1)
  redis.call('PEXPIRE', KEYS[3], 60000)
end
local d = tonumber(ARGV[2])
if d > 0 then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local nb = tonumber(redis.call('GET', KEYS[2]) or '0')
  if now + d > nb then redis.call('SET', KEYS[2], now + d, 'PX', d + 1000) end
end
return 1
",
    )
});

/// Extends a held permit: KEYS = host set; ARGV = token, lease ms.
/// Returns 1, or 0 when the token is no longer held.
static RENEW: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        "local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[2])
if redis.call('ZADD', KEYS[1], 'XX', 'CH', now + lease, ARGV[1]) == 0 and not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
if redis.call('PTTL', KEYS[1]) < lease + 1000 then redis.call('PEXPIRE', KEYS[1], lease + 1000) end
return 1
",
    )
});

/// Counts waits for a permit: KEYS = `waits:ms`, `waits:n`, stats; ARGV =
/// host, ms, waits. The host's milliseconds go into a sorted set, so that
/// `crawl status` reads the hosts that waited longest without reading
/// every host ([`STATUS_HOSTS`]); its count of waits into a hash; both
/// totals into the crawl's counters. One round trip.
static WAITED: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        "redis.call('ZINCRBY', KEYS[1], ARGV[2], ARGV[1])
redis.call('HINCRBY', KEYS[2], ARGV[1], ARGV[3])
redis.call('HINCRBY', KEYS[3], 'waited_ms', ARGV[2])
redis.call('HINCRBY', KEYS[3], 'waits', ARGV[3])
return 1
",
    )
});

/// The most hosts [`CrawlQueue::status`] reads per-host waits of: those
/// that waited longest. A crawl over millions of hosts may see waits at
/// many of them; the status reads these few and the number of all
/// ([`CrawlStatus::hosts_waited`]), never every host.
pub const STATUS_HOSTS: usize = 100;

fn int(r: &Reply) -> Option<i64> {
    match r {
        Reply::Int(i) => Some(*i),
        Reply::Bulk(Some(b)) => std::str::from_utf8(b).ok()?.parse().ok(),
        Reply::Status(s) => s.parse().ok(),
        _ => None,
    }
}

fn text(r: &Reply) -> Option<String> {
    match r {
        Reply::Bulk(Some(b)) => String::from_utf8(b.clone()).ok(),
        Reply::Status(s) => Some(s.clone()),
        _ => None,
    }
}

fn array(r: &Reply) -> &[Reply] {
    match r {
        Reply::Array(Some(a)) => a,
        _ => &[],
    }
}

/// The field/value list of a hash or a stream entry, as pairs.
fn pairs(r: &Reply) -> Vec<(String, &Reply)> {
    array(r)
        .chunks(2)
        .filter_map(|c| match c {
            [k, v] => Some((text(k)?, v)),
            _ => None,
        })
        .collect()
}

/// One entry (`[id, [field, value, ...]]`) of input stream `shard` as an
/// input; `None` for a deleted or malformed one.
fn entry(r: &Reply, shard: u16) -> Option<CrawlEntry> {
    let [id, fields] = array(r) else {
        return None;
    };
    let f = pairs(fields);
    let get = |k: &str| f.iter().find(|(n, _)| n == k).and_then(|(_, v)| text(v));
    Some(CrawlEntry {
        entry: text(id)?,
        shard,
        id: get("id")?,
        input: get("input")?,
        depth: get("depth").and_then(|d| d.parse().ok()).unwrap_or(0),
        attempt: get("attempt").and_then(|d| d.parse().ok()).unwrap_or(0),
    })
}

/// A reply of the finishing script ([`CrawlQueue::finish_and_take`])
/// that is not the MessagePack it packs: a wrong type, a value cut short,
/// a length past the end, bytes left over, or the wrong number of results.
/// The call then fails closed ([`ReplayError::Unavailable`]): its results
/// are written again, once, and its entries taken over after their lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MalformedTake {
    /// Offset in the reply of the value that could not be read.
    pub(crate) at: usize,
    /// What was wrong with it.
    pub(crate) why: &'static str,
}

impl std::fmt::Display for MalformedTake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "malformed reply to the finishing script at byte {}: {}",
            self.at, self.why
        )
    }
}

impl std::error::Error for MalformedTake {}

/// A reader of the MessagePack values `cmsgpack.pack` writes (MessagePack
/// specification, "Formats": nil, booleans, integers, strings and binary,
/// arrays), one value after the other, each bounded by the bytes left: a
/// length past the end is an error, never a read or an allocation past it.
struct Unpack<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Unpack<'a> {
    fn fail<T>(&self, why: &'static str) -> Result<T, MalformedTake> {
        Err(MalformedTake { at: self.at, why })
    }

    fn byte(&mut self) -> Result<u8, MalformedTake> {
        let Some(&b) = self.b.get(self.at) else {
            return self.fail("cut short");
        };
        self.at += 1;
        Ok(b)
    }

    /// The next `n` bytes.
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], MalformedTake> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let Some(end) = end else {
            return self.fail("a length past the end");
        };
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    /// The next `N` bytes, as an array.
    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], MalformedTake> {
        let mut a = [0; N];
        a.copy_from_slice(self.bytes(N)?);
        Ok(a)
    }

    /// A length of `N` (1, 2 or 4) bytes, big-endian, as a count of
    /// elements or bytes to read.
    fn len<const N: usize>(&mut self) -> Result<usize, MalformedTake> {
        let v = self
            .fixed::<N>()?
            .iter()
            .fold(0u64, |v, &b| (v << 8) | u64::from(b));
        usize::try_from(v).or_else(|_| self.fail("a length past the end"))
    }

    /// An array's length. Each element takes at least one byte, so a
    /// length larger than the bytes left is refused before anything is
    /// allocated for it.
    fn array(&mut self) -> Result<usize, MalformedTake> {
        let start = self.at;
        let n = match self.byte()? {
            t @ 0x90..=0x9f => usize::from(t & 0x0f),
            0xdc => self.len::<2>()?,
            0xdd => self.len::<4>()?,
            _ => {
                self.at = start;
                return self.fail("not an array");
            }
        };
        if n > self.b.len() - self.at {
            self.at = start;
            return self.fail("a length past the end");
        }
        Ok(n)
    }

    /// An integer (a Lua number `cmsgpack` packs as one).
    fn int(&mut self) -> Result<i64, MalformedTake> {
        let start = self.at;
        let t = self.byte()?;
        let v = match t {
            0x00..=0x7f => i64::from(t),
            0xe0..=0xff => i64::from(t) - 256,
            0xcc => i64::from(self.byte()?),
            0xcd => i64::from(u16::from_be_bytes(self.fixed()?)),
            0xce => i64::from(u32::from_be_bytes(self.fixed()?)),
            0xcf => i64::try_from(u64::from_be_bytes(self.fixed()?))
                .or_else(|_| self.fail("an integer out of range"))?,
            0xd0 => i64::from(i8::from_be_bytes(self.fixed()?)),
            0xd1 => i64::from(i16::from_be_bytes(self.fixed()?)),
            0xd2 => i64::from(i32::from_be_bytes(self.fixed()?)),
            0xd3 => i64::from_be_bytes(self.fixed()?),
            _ => {
                self.at = start;
                return self.fail("not an integer");
            }
        };
        Ok(v)
    }

    /// A string's bytes (`str` or `bin`: a Lua string is either).
    fn str(&mut self) -> Result<&'a [u8], MalformedTake> {
        let start = self.at;
        let n = match self.byte()? {
            t @ 0xa0..=0xbf => usize::from(t & 0x1f),
            0xd9 | 0xc4 => self.len::<1>()?,
            0xda | 0xc5 => self.len::<2>()?,
            0xdb | 0xc6 => self.len::<4>()?,
            _ => {
                self.at = start;
                return self.fail("not a string");
            }
        };
        self.bytes(n).map_err(|e| MalformedTake { at: start, ..e })
    }
}

/// The finishing script's packed reply ([`FINISH_TAKE`]) for a call that
/// gave `results` results. An entry whose fields lack its input id or
/// input (a deleted entry, read with no fields), or whose attempt count is
/// not one the script gives, is skipped, as the unpacked reply's were: it
/// stays pending and is taken over after its lease.
///
/// # Errors
/// [`MalformedTake`] when the reply is not the script's MessagePack.
fn read_finish_take(packed: &[u8], results: usize) -> Result<FinishedAndTaken, MalformedTake> {
    let mut p = Unpack { b: packed, at: 0 };
    let n = p.array()?;
    if n != results {
        return p.fail("not one value per result");
    }
    let mut finished = Vec::with_capacity(n);
    for _ in 0..n {
        finished.push(match p.int()? {
            1 => Finished::Written,
            0 => Finished::Duplicate,
            _ => return p.fail("a result neither written nor a duplicate"),
        });
    }
    let n = p.array()?;
    let mut taken = Vec::with_capacity(n);
    for _ in 0..n {
        if p.array()? != 4 {
            return p.fail("an entry taken not [id, fields, attempts, stream]");
        }
        let stream_id = p.str()?;
        let (mut id, mut input, mut depth, mut attempt) = (None, None, None, None);
        let fields = p.array()?;
        if fields % 2 != 0 {
            return p.fail("an odd number of field names and values");
        }
        for _ in 0..fields / 2 {
            let (k, v) = (p.str()?, p.str()?);
            match k {
                b"id" => id = Some(v),
                b"input" => input = Some(v),
                b"depth" => depth = Some(v),
                b"attempt" => attempt = Some(v),
                _ => {}
            }
        }
        let started = match p.int()? {
            -1 => Some(None),
            n if n > 0 => Some(Some(u32::try_from(n).unwrap_or(u32::MAX))),
            _ => None,
        };
        let Some(shard) = u16::try_from(p.int()?)
            .ok()
            .filter(|&x| usize::from(x) < SHARDS)
        else {
            return p.fail("an entry's input stream not one of the crawl's");
        };
        let text = |v: Option<&[u8]>| {
            v.and_then(|v| std::str::from_utf8(v).ok())
                .map(str::to_owned)
        };
        let number = |v: Option<&[u8]>| {
            v.and_then(|v| std::str::from_utf8(v).ok())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        let entry = (|| {
            Some(CrawlEntry {
                entry: text(Some(stream_id))?,
                shard,
                id: text(id)?,
                input: text(input)?,
                depth: number(depth),
                attempt: number(attempt),
            })
        })();
        if let (Some(e), Some(started)) = (entry, started) {
            taken.push((e, started));
        }
    }
    let stopped = p.int()? == 1;
    if p.at != packed.len() {
        return p.fail("bytes after the reply");
    }
    Ok(FinishedAndTaken {
        finished,
        taken,
        stopped,
    })
}

/// The milliseconds of a stream id (`MS-SEQ`).
fn id_ms(id: &str) -> Option<u64> {
    id.split('-').next()?.parse().ok()
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The streams of `streams` that are the crawl's, each once, in their
/// order; every stream when none is.
fn read_order(streams: &[u16]) -> Vec<u16> {
    let mut seen = [false; SHARDS];
    let order: Vec<u16> = streams
        .iter()
        .copied()
        .filter(|&x| {
            let i = usize::from(x);
            i < SHARDS && !std::mem::replace(&mut seen[i], true)
        })
        .collect();
    if order.is_empty() {
        (0..SHARDS).filter_map(|x| u16::try_from(x).ok()).collect()
    } else {
        order
    }
}

/// The input streams `consumer` reads first, given the live workers
/// `members` ([`CrawlQueue::members`]; `consumer` counted among them even
/// when missing): the streams whose number is its rank among them modulo
/// their count. Each stream is one worker's, and the workers' shares
/// differ by at most one stream; every worker computes the same shares
/// from the same members.
pub fn own_shards(members: &[String], consumer: &str) -> Vec<u16> {
    let mut names: Vec<&str> = members.iter().map(String::as_str).collect();
    if !names.contains(&consumer) {
        names.push(consumer);
    }
    names.sort_unstable();
    names.dedup();
    let (Some(rank), count) = (names.iter().position(|n| *n == consumer), names.len()) else {
        return Vec::new();
    };
    (0..SHARDS)
        .filter(|x| x % count == rank)
        .filter_map(|x| u16::try_from(x).ok())
        .collect()
}

impl CrawlQueue {
    /// The crawl `name` in the Redis of `url` (any store URL of
    /// [`RedisConfig`]: `redis://`, `rediss://`, `redis+cluster://`,
    /// `redis+sentinel://`, with `?wait=N` for acknowledged writes). Does
    /// not connect.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] for a bad URL or name.
    pub fn open(url: &str, name: &str) -> Result<CrawlQueue, ReplayError> {
        CrawlQueue::with_config(RedisConfig::from_url(url)?, name)
    }

    /// The crawl `name` with explicit Redis settings.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] for a bad name.
    pub fn with_config(mut cfg: RedisConfig, name: &str) -> Result<CrawlQueue, ReplayError> {
        check_crawl_name(name).map_err(ReplayError::Unavailable)?;
        // A blocking read waits up to one second on the server.
        cfg.io_timeout = cfg.io_timeout.max(Duration::from_secs(3));
        let prefix = format!("agentsig:crawl:{{{name}}}:");
        Ok(CrawlQueue {
            client: RedisClient::new(cfg),
            shards: (0..SHARDS)
                .map(|x| format!("{prefix}inputs:{x}").into_bytes())
                .collect(),
            numbers: (0..SHARDS).map(|x| x.to_string()).collect(),
            prefix,
        })
    }

    /// The keys of the input streams, `inputs:0` first.
    fn shard_keys(&self) -> impl Iterator<Item = &[u8]> {
        self.shards.iter().map(Vec::as_slice)
    }

    /// The number of input stream `x` as a script's argument (`x` is below
    /// [`SHARDS`]: [`shard_of`], [`read_order`] and the callers' checks).
    fn number(&self, x: u16) -> &str {
        self.numbers.get(usize::from(x)).map_or("", String::as_str)
    }

    /// The key of input stream `x` (a number the crawl's: [`SHARDS`]).
    fn shard_key(&self, x: u16) -> Result<&[u8], ReplayError> {
        self.shards
            .get(usize::from(x))
            .map(Vec::as_slice)
            .ok_or_else(|| self.client.unavailable(format!("no input stream {x}")))
    }

    fn key(&self, k: &str) -> Vec<u8> {
        format!("{}{k}", self.prefix).into_bytes()
    }

    /// The key of one of the crawl's streams or hashes, for tests and
    /// operators (`inputs`, `results`, `done`, ...).
    pub fn key_name(&self, k: &str) -> String {
        format!("{}{k}", self.prefix)
    }

    /// Create the input streams and their consumer groups, if not there
    /// yet.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn create(&self) -> Result<(), ReplayError> {
        let hashes = BY_ID.map(|k| self.key(k));
        let keys: Vec<&[u8]> = hashes
            .iter()
            .map(Vec::as_slice)
            .chain(self.shard_keys())
            .collect();
        let streams = SHARDS.to_string();
        self.client
            .eval(
                &CREATE,
                &keys,
                &[
                    GROUP.as_bytes(),
                    HASHTABLE_FIELD.as_bytes(),
                    HASHTABLE_NOTE.as_bytes(),
                    streams.as_bytes(),
                ],
                None,
            )
            .map(drop)
    }

    /// A worker's heartbeat in the fleet: `consumer` is live for `lease`
    /// from now (on the server's clock; `Duration::ZERO`: it leaves).
    /// Returns the names of the live workers, sorted, for
    /// [`own_shards`].
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn members(&self, consumer: &str, lease: Duration) -> Result<Vec<String>, ReplayError> {
        let key = self.key("members");
        // An empty name never joins (the status reads the members so).
        let lease = if consumer.is_empty() {
            Duration::ZERO
        } else {
            lease
        };
        let lease = millis(lease).to_string();
        let r = self.client.eval(
            &MEMBERS,
            &[key.as_slice()],
            &[consumer.as_bytes(), lease.as_bytes()],
            None,
        )?;
        let mut names: Vec<String> = array(&r).iter().filter_map(text).collect();
        names.sort();
        Ok(names)
    }

    /// Queue `inputs` at catalog depth `depth`, each once in the crawl's
    /// life (an input queued before is not queued again). Returns how many
    /// were queued.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached or an
    /// input is longer than [`MAX_INPUT`].
    pub fn add(&self, inputs: &[String], depth: u32) -> Result<u64, ReplayError> {
        let mut total = 0;
        let d = depth.to_string();
        for chunk in inputs.chunks(500) {
            let ids: Vec<(String, &str)> = chunk
                .iter()
                .map(|i| (input_id(i), self.number(shard_of(i))))
                .collect();
            let mut argv: Vec<&[u8]> = Vec::new();
            for ((id, shard), input) in ids.iter().zip(chunk) {
                if input.len() > MAX_INPUT {
                    return Err(self
                        .client
                        .unavailable(format!("an input longer than {MAX_INPUT} bytes")));
                }
                argv.extend([
                    id.as_bytes(),
                    input.as_bytes(),
                    d.as_bytes(),
                    shard.as_bytes(),
                ]);
            }
            let (seen, stats) = (self.key("seen"), self.key("stats"));
            let mut keys: Vec<&[u8]> = vec![&seen, &stats];
            keys.extend(self.shard_keys());
            let r = self
                .client
                .eval(&ADD, &keys, &argv, Some((keys[0], always)))?;
            total += int(&r).and_then(|n| u64::try_from(n).ok()).unwrap_or(0);
        }
        Ok(total)
    }

    /// Append one entry to the input stream as it is, bypassing the
    /// once-per-crawl rule of [`CrawlQueue::add`]: the duplicate a replayed
    /// client or a failover can produce (for tests of idempotency).
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn add_raw(&self, input: &str) -> Result<(), ReplayError> {
        let id = input_id(input);
        self.client.query(
            &[
                b"XADD",
                self.shard_key(shard_of(input))?,
                b"*",
                b"id",
                id.as_bytes(),
                b"input",
                input.as_bytes(),
                b"depth",
                b"0",
                b"attempt",
                b"0",
            ],
            None,
        )?;
        Ok(())
    }

    /// New entries for `consumer` from the input streams `streams` (as
    /// [`CrawlQueue::finish_and_take`] reads them; none given: every
    /// stream), up to `count` from each, waiting at most `block` for one to
    /// arrive.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn take(
        &self,
        consumer: &str,
        count: usize,
        block: Duration,
        streams: &[u16],
    ) -> Result<Vec<CrawlEntry>, ReplayError> {
        let order = read_order(streams);
        let (count, block) = (count.max(1).to_string(), millis(block).to_string());
        let mut args: Vec<&[u8]> = vec![
            b"XREADGROUP",
            b"GROUP",
            GROUP.as_bytes(),
            consumer.as_bytes(),
            b"COUNT",
            count.as_bytes(),
            b"BLOCK",
            block.as_bytes(),
            b"STREAMS",
        ];
        for &x in &order {
            args.push(self.shard_key(x)?);
        }
        args.extend(std::iter::repeat_n(b">".as_slice(), order.len()));
        let r = self.client.query(&args, None)?;
        Ok(array(&r)
            .iter()
            .flat_map(|s| {
                // The stream of a reply is named by its key.
                let (shard, entries) = match array(s) {
                    [key, entries] => (
                        text(key)
                            .and_then(|k| self.shards.iter().position(|x| x == k.as_bytes()))
                            .and_then(|x| u16::try_from(x).ok()),
                        array(entries),
                    ),
                    _ => (None, &[][..]),
                };
                entries
                    .iter()
                    .filter_map(move |e| shard.and_then(|x| entry(e, x)))
            })
            .collect())
    }

    /// Take over up to `count` entries pending with any worker for longer
    /// than `lease` (`XAUTOCLAIM` on each input stream in turn, from the
    /// `first`): the inputs of a worker that died or stalled.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn claim_stale(
        &self,
        consumer: &str,
        lease: Duration,
        count: usize,
        first: u16,
    ) -> Result<Vec<CrawlEntry>, ReplayError> {
        let (count, lease) = (count.max(1).to_string(), millis(lease).to_string());
        let first = (usize::from(first) % SHARDS).to_string();
        let stats = self.key("stats");
        let mut keys: Vec<&[u8]> = vec![&stats];
        keys.extend(self.shard_keys());
        let r = self.client.eval(
            &CLAIM,
            &keys,
            &[
                GROUP.as_bytes(),
                consumer.as_bytes(),
                lease.as_bytes(),
                count.as_bytes(),
                first.as_bytes(),
            ],
            None,
        )?;
        Ok(array(&r)
            .iter()
            .filter_map(|p| match array(p) {
                [x, e] => {
                    let x = int(x).and_then(|x| u16::try_from(x).ok())?;
                    (usize::from(x) < SHARDS).then(|| entry(e, x)).flatten()
                }
                _ => None,
            })
            .collect())
    }

    /// Keep the entries `held` (input stream, entry id; held by `consumer`,
    /// being verified) from being taken over: their idle time starts again
    /// (`XCLAIM ... 0 JUSTID`). A worker's heartbeat, so the lease measures
    /// whether a worker lives, not how long one input takes.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn renew(&self, consumer: &str, held: &[(u16, String)]) -> Result<(), ReplayError> {
        if held.is_empty() {
            return Ok(());
        }
        let keys: Vec<&[u8]> = self.shard_keys().collect();
        let numbers: Vec<String> = held.iter().map(|(x, _)| x.to_string()).collect();
        let mut argv: Vec<&[u8]> = vec![GROUP.as_bytes(), consumer.as_bytes()];
        for ((shard, id), n) in held.iter().zip(&numbers) {
            if usize::from(*shard) < SHARDS {
                argv.extend([n.as_bytes(), id.as_bytes()]);
            }
        }
        self.client.eval(&RENEW_HELD, &keys, &argv, None)?;
        Ok(())
    }

    /// Start an attempt at `e`: the attempts started so far (this one
    /// included), or `None` when the input has a result already (the entry
    /// is then acknowledged: a duplicate).
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn start(&self, e: &CrawlEntry) -> Result<Option<u32>, ReplayError> {
        let (done, tries) = (self.key("done"), self.key("tries"));
        let keys: Vec<&[u8]> = vec![&done, &tries, self.shard_key(e.shard)?];
        let r = self.client.eval(
            &START,
            &keys,
            &[e.id.as_bytes(), e.entry.as_bytes(), GROUP.as_bytes()],
            None,
        )?;
        match int(&r) {
            Some(-1) => Ok(None),
            Some(n) => Ok(Some(u32::try_from(n).unwrap_or(u32::MAX))),
            None => Err(self.client.unavailable(format!("unexpected reply {r:?}"))),
        }
    }

    /// The reason recorded for the last failed attempt at input `id`.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn last_failure(&self, id: &str) -> Result<Option<String>, ReplayError> {
        let r = self
            .client
            .query(&[b"HGET", &self.key("why"), id.as_bytes()], None)?;
        Ok(text(&r))
    }

    /// Record the one result of `e` (unless it has one), queue `children`
    /// (catalog entries, at depth `e.depth + 1`) and acknowledge `e`, all in
    /// one script; with acknowledged writes, only after the replicas have it.
    /// One [`CrawlQueue::finish_and_take`] that takes nothing.
    ///
    /// # Errors
    /// As [`CrawlQueue::finish_and_take`]: the entry then stays pending and
    /// is finished again.
    pub fn finish(
        &self,
        e: &CrawlEntry,
        result: &ResultRecord<'_>,
        children: &[String],
    ) -> Result<Finished, ReplayError> {
        let done = [Finishing {
            entry: e,
            result: *result,
            children,
        }];
        let r = self.finish_and_take(&done, "", 0, &[])?;
        r.finished
            .first()
            .copied()
            .ok_or_else(|| self.client.unavailable("no reply for the result"))
    }

    /// In one script call, one round trip: record the result of each of
    /// `done` as [`CrawlQueue::finish`] does (each written only when its
    /// input has none, atomically with the acknowledgement of its entry),
    /// then, unless the crawl is stopped, take up to `take` new entries for
    /// `consumer` from the input streams `streams`, in that order (a
    /// worker's share: [`own_shards`]; none given: every stream), and start
    /// an attempt at each (`(entry, attempts)`,
    /// attempts `None` for an input that has a result already: the entry
    /// is then acknowledged, a duplicate). Nothing taken when `take` is 0
    /// or no new entry is there (then wait with [`CrawlQueue::take`]).
    /// With acknowledged writes and results in `done`, the call returns
    /// only once the replicas have them.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached, a report
    /// is larger than [`MAX_REPORT`] or the write was not acknowledged: the
    /// entries of `done` then stay pending (or are finished on the primary
    /// only) and are finished again after their lease, once; entries the
    /// script took are taken over after their lease.
    pub fn finish_and_take(
        &self,
        done: &[Finishing<'_>],
        consumer: &str,
        take: usize,
        streams: &[u16],
    ) -> Result<FinishedAndTaken, ReplayError> {
        if done.iter().any(|f| f.result.report.len() > MAX_REPORT) {
            return Err(self
                .client
                .unavailable(format!("a report larger than {MAX_REPORT} bytes")));
        }
        let named =
            ["done", "results", "stats", "seen", "tries", "why", "state"].map(|k| self.key(k));
        let mut keys: Vec<&[u8]> = named.iter().map(Vec::as_slice).collect();
        keys.extend(self.shard_keys());
        // The numbers each result needs as text, and its children's ids.
        let depths: Vec<String> = done
            .iter()
            .map(|f| f.entry.depth.saturating_add(1).to_string())
            .collect();
        let children: Vec<Vec<(String, &String, &str)>> = done
            .iter()
            .map(|f| {
                f.children
                    .iter()
                    .filter(|c| c.len() <= MAX_INPUT)
                    .map(|c| (input_id(c), c, self.number(shard_of(c))))
                    .collect()
            })
            .collect();
        let counts: Vec<String> = children.iter().map(|c| c.len().to_string()).collect();
        let order = if take == 0 {
            Vec::new()
        } else {
            read_order(streams)
        };
        let (take_n, n) = (take.to_string(), done.len().to_string());
        // One byte per stream, its number (below SHARDS, so below 256):
        // one argument the script reads with `string.byte`, where a
        // number per stream was an argument and a `tonumber` each.
        let order: Vec<u8> = order.iter().filter_map(|&x| u8::try_from(x).ok()).collect();
        let mut argv: Vec<&[u8]> = vec![
            GROUP.as_bytes(),
            consumer.as_bytes(),
            take_n.as_bytes(),
            n.as_bytes(),
            &order,
        ];
        for (((f, depth), kids), count) in done.iter().zip(&depths).zip(&children).zip(&counts) {
            if usize::from(f.entry.shard) >= SHARDS {
                return Err(self
                    .client
                    .unavailable(format!("no input stream {}", f.entry.shard)));
            }
            argv.extend([
                f.entry.id.as_bytes(),
                f.entry.entry.as_bytes(),
                self.number(f.entry.shard).as_bytes(),
                f.entry.input.as_bytes(),
                f.result.report,
                f.result.verdict.as_bytes(),
                f.result.code.as_bytes(),
                depth.as_bytes(),
                count.as_bytes(),
            ]);
            for (id, c, x) in kids {
                argv.extend([id.as_bytes(), c.as_bytes(), x.as_bytes()]);
            }
        }
        // Only results need the replicas' acknowledgement (a take alone
        // starts attempts, which a lost write only counts once less).
        let ack = (!done.is_empty()).then_some((keys[1], always as fn(&_) -> bool));
        let r = self.client.eval(&FINISH_TAKE, &keys, &argv, ack)?;
        let Reply::Bulk(Some(packed)) = &r else {
            return Err(self
                .client
                .unavailable(format!("unexpected reply to the finishing script {r:?}")));
        };
        read_finish_take(packed, done.len()).map_err(|e| self.client.unavailable(e))
    }

    /// Put the attempt started at `e` off without counting it (no
    /// connection permit came: the origin was never asked): queue `e` again
    /// as it is, with `reason`, take the attempt back from the input's
    /// count and acknowledge `e`. At most `most` times per input: past
    /// that `false` is returned and nothing written (the attempt counts;
    /// [`CrawlQueue::retry`] it).
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn postpone(&self, e: &CrawlEntry, reason: &str, most: u32) -> Result<bool, ReplayError> {
        let most = most.to_string();
        let r = self.requeue(
            &POSTPONE,
            e,
            e.attempt,
            reason,
            &["postponed", "tries"],
            &most,
        )?;
        match int(&r) {
            Some(1) => Ok(true),
            Some(0) => Ok(false),
            _ => Err(self.client.unavailable(format!("unexpected reply {r:?}"))),
        }
    }

    /// Queue another attempt at `e` (attempt + 1) with the reason this one
    /// failed, and acknowledge `e`.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn retry(&self, e: &CrawlEntry, reason: &str) -> Result<(), ReplayError> {
        self.requeue(&RETRY, e, e.attempt.saturating_add(1), reason, &[], "")?;
        Ok(())
    }

    /// Run `script` ([`RETRY`] or [`POSTPONE`]) over `e`: KEYS = its input
    /// stream, why, stats, done, then `more_keys`, then the input's stream
    /// now ([`shard_of`]); ARGV = id, entry, group, input, depth,
    /// `attempt`, reason (at most 1,000 characters), then `more` when not
    /// empty.
    fn requeue(
        &self,
        script: &redis::Script,
        e: &CrawlEntry,
        attempt: u32,
        reason: &str,
        more_keys: &[&str],
        more: &str,
    ) -> Result<Reply, ReplayError> {
        let named: Vec<Vec<u8>> = ["why", "stats", "done"]
            .iter()
            .chain(more_keys)
            .map(|k| self.key(k))
            .collect();
        let mut keys: Vec<&[u8]> = vec![self.shard_key(e.shard)?];
        keys.extend(named.iter().map(Vec::as_slice));
        keys.push(self.shard_key(shard_of(&e.input))?);
        let (depth, attempt) = (e.depth.to_string(), attempt.to_string());
        let reason: String = reason.chars().take(1000).collect();
        let mut argv: Vec<&[u8]> = vec![
            e.id.as_bytes(),
            e.entry.as_bytes(),
            GROUP.as_bytes(),
            e.input.as_bytes(),
            depth.as_bytes(),
            attempt.as_bytes(),
            reason.as_bytes(),
        ];
        if !more.is_empty() {
            argv.push(more.as_bytes());
        }
        self.client
            .eval(script, &keys, &argv, Some((keys[0], always)))
    }

    /// Ask for a permit to open one connection to `host` (`host:port`):
    /// at most `limit` held at once by the whole fleet, connections started
    /// at least `interval` apart; a permit not given back ends by itself
    /// after `lease` (its holder died). `starved`: the asker holds no
    /// usable permit of the host, so a full host is flagged as wanted
    /// ([`CrawlQueue::host_wanted`]); an asker that has one makes progress
    /// with it and does not take others' kept permits away.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached: no
    /// permit (fail closed).
    pub fn host_acquire(
        &self,
        host: &str,
        token: &str,
        limit: usize,
        interval: Duration,
        lease: Duration,
        starved: bool,
    ) -> Result<Permit, ReplayError> {
        let h = host_hash(host);
        let keys = [
            self.key(&format!("host:{h}")),
            self.key(&format!("next:{h}")),
            self.key(&format!("wanted:{h}")),
        ];
        let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let (limit, iv, lease) = (
            limit.max(1).to_string(),
            millis(interval).to_string(),
            millis(lease).max(1).to_string(),
        );
        let r = self.client.eval(
            &ACQUIRE,
            &keys,
            &[
                token.as_bytes(),
                limit.as_bytes(),
                iv.as_bytes(),
                lease.as_bytes(),
                if starved { b"1" } else { b"0" },
            ],
            None,
        )?;
        match int(&r) {
            Some(0) => Ok(Permit::Granted),
            Some(-1) => Ok(Permit::Full),
            Some(n) if n > 0 => Ok(Permit::NotBefore(n.unsigned_abs())),
            _ => Err(self.client.unavailable(format!("unexpected reply {r:?}"))),
        }
    }

    /// Give back the permit `token` of `host` (an empty token: none, only
    /// the delay), waking one worker waiting for the host
    /// ([`CrawlQueue::host_wait`]); with `delay` (a `Retry-After`), the
    /// host's next connection waits that long.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached (the
    /// permit then ends with its lease).
    pub fn host_release(
        &self,
        host: &str,
        token: &str,
        delay: Duration,
        limit: usize,
    ) -> Result<(), ReplayError> {
        let h = host_hash(host);
        let keys = [
            self.key(&format!("host:{h}")),
            self.key(&format!("next:{h}")),
            self.key(&format!("wake:{h}")),
        ];
        let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let (d, limit) = (millis(delay).to_string(), limit.max(1).to_string());
        self.client.eval(
            &RELEASE,
            &keys,
            &[token.as_bytes(), d.as_bytes(), limit.as_bytes()],
            None,
        )?;
        Ok(())
    }

    /// Extend the lease of the permit `token` of `host` to `lease` from now
    /// (a permit kept for reuse). `false` when the permit is no longer
    /// held (its lease ran out).
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn host_renew(
        &self,
        host: &str,
        token: &str,
        lease: Duration,
    ) -> Result<bool, ReplayError> {
        let h = host_hash(host);
        let keys = [self.key(&format!("host:{h}"))];
        let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let lease = millis(lease).max(1).to_string();
        let r = self
            .client
            .eval(&RENEW, &keys, &[token.as_bytes(), lease.as_bytes()], None)?;
        Ok(int(&r) == Some(1))
    }

    /// Wait, at most `timeout`, until a permit of one of `hosts` is given
    /// back anywhere in the fleet (`BLPOP` on their wake lists): the host
    /// woken, if any. A permit whose holder died ends with its lease
    /// without a wake: wait again after a short timeout.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn host_wait(
        &self,
        hosts: &[String],
        timeout: Duration,
    ) -> Result<Option<String>, ReplayError> {
        if hosts.is_empty() {
            return Ok(None);
        }
        let keys: Vec<Vec<u8>> = hosts
            .iter()
            .map(|h| self.key(&format!("wake:{}", host_hash(h))))
            .collect();
        let secs = format!("{:.3}", timeout.as_secs_f64().max(0.001));
        let mut args: Vec<&[u8]> = vec![b"BLPOP"];
        args.extend(keys.iter().map(Vec::as_slice));
        args.push(secs.as_bytes());
        let r = self.client.query(&args, None)?;
        let woken = array(&r).first().and_then(text);
        Ok(woken.and_then(|k| {
            keys.iter()
                .position(|w| w.as_slice() == k.as_bytes())
                .map(|i| hosts[i].clone())
        }))
    }

    /// Which of `hosts` a fetch somewhere in the fleet found full within
    /// the last second ([`CrawlQueue::host_acquire`] answered
    /// [`Permit::Full`]): a holder keeping permits of such a host gives
    /// them back rather than reuse them.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn host_wanted(&self, hosts: &[String]) -> Result<Vec<bool>, ReplayError> {
        if hosts.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<Vec<u8>> = hosts
            .iter()
            .map(|h| self.key(&format!("wanted:{}", host_hash(h))))
            .collect();
        let mut args: Vec<&[u8]> = vec![b"MGET"];
        args.extend(keys.iter().map(Vec::as_slice));
        let r = self.client.query(&args, None)?;
        let set = array(&r);
        Ok((0..hosts.len())
            .map(|i| set.get(i).and_then(text).is_some())
            .collect())
    }

    /// Count `waits` waits for a permit of `host`, `ms` milliseconds in
    /// all.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn host_waited(&self, host: &str, ms: u64, waits: u64) -> Result<(), ReplayError> {
        let host: String = host.chars().take(300).collect();
        let (ms, waits) = (ms.to_string(), waits.to_string());
        let keys = [self.key("waits:ms"), self.key("waits:n"), self.key("stats")];
        let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        self.client.eval(
            &WAITED,
            &keys,
            &[host.as_bytes(), ms.as_bytes(), waits.as_bytes()],
            None,
        )?;
        Ok(())
    }

    /// Stop (`true`) or resume the crawl: workers finish the input at hand
    /// and take no other while it is stopped.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn set_stopped(&self, stopped: bool) -> Result<(), ReplayError> {
        let k = self.key("state");
        if stopped {
            self.client.query(&[b"SET", &k, b"stopped"], None)?;
        } else {
            self.client.query(&[b"DEL", &k], None)?;
        }
        Ok(())
    }

    /// Whether the crawl is stopped.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn stopped(&self) -> Result<bool, ReplayError> {
        let r = self.client.query(&[b"GET", &self.key("state")], None)?;
        Ok(text(&r).as_deref() == Some("stopped"))
    }

    /// Entries not yet finished (waiting or pending), in all the input
    /// streams, with those finished after an older pending one
    /// ([`CrawlStatus::queued`]): 0 once every input queued has its result.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn queued(&self) -> Result<u64, ReplayError> {
        self.count_queued(b"all")
    }

    /// Whether any entry is not yet finished: what `queued() > 0` says,
    /// at the cost of the streams' lengths up to the first that is not
    /// empty (a worker run until the crawl is empty asks it between its
    /// waits for a new entry).
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn any_queued(&self) -> Result<bool, ReplayError> {
        Ok(self.count_queued(b"any")? > 0)
    }

    /// [`QUEUED`] over every input stream, in one round trip.
    fn count_queued(&self, mode: &[u8]) -> Result<u64, ReplayError> {
        let keys: Vec<&[u8]> = self.shard_keys().collect();
        let r = self.client.eval(&QUEUED, &keys, &[mode], None)?;
        int(&r).and_then(|n| u64::try_from(n).ok()).ok_or_else(|| {
            self.client
                .unavailable(format!("unexpected reply to the queue's count {r:?}"))
        })
    }

    /// The results, oldest first, from stream id `after` (exclusive; `"0"`
    /// for the first), at most `count`: (stream id, input, report JSON).
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn results(
        &self,
        after: &str,
        count: usize,
    ) -> Result<Vec<(String, String, Vec<u8>)>, ReplayError> {
        let start = format!("({after}");
        let start = if after == "0" { "-".to_owned() } else { start };
        let count = count.max(1).to_string();
        let r = self.client.query(
            &[
                b"XRANGE",
                &self.key("results"),
                start.as_bytes(),
                b"+",
                b"COUNT",
                count.as_bytes(),
            ],
            None,
        )?;
        Ok(array(&r)
            .iter()
            .filter_map(|e| {
                let [id, fields] = array(e) else { return None };
                let f = pairs(fields);
                let get = |k: &str| f.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
                let report = match get("report")? {
                    Reply::Bulk(Some(b)) => b.clone(),
                    _ => return None,
                };
                Some((text(id)?, text(get("input")?)?, report))
            })
            .collect())
    }

    /// Take the results `ids` (stream ids from [`CrawlQueue::results`]) out
    /// of the results stream, once the caller has written them elsewhere,
    /// so that a crawl of many inputs does not hold every report in Redis
    /// memory. Each input keeps its `done` record: it is neither queued nor
    /// verified again, and [`CrawlStatus::results`] still counts its result.
    /// Returns the entries deleted (an id already taken out counts none).
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn remove_results(&self, ids: &[String]) -> Result<u64, ReplayError> {
        let named = ["results", "stats", "recent"].map(|k| self.key(k));
        let keys: Vec<&[u8]> = named.iter().map(Vec::as_slice).collect();
        let kept = RECENT.to_string();
        let mut removed = 0;
        // In slices: Lua's unpack is bounded.
        for part in ids.chunks(500) {
            let argv: Vec<&[u8]> = std::iter::once(kept.as_bytes())
                .chain(part.iter().map(String::as_bytes))
                .collect();
            let r = self.client.eval(&REMOVE_RESULTS, &keys, &argv, None)?;
            removed += int(&r).and_then(|n| u64::try_from(n).ok()).unwrap_or(0);
        }
        Ok(removed)
    }

    /// Hold (or renew) the right to take results out of the crawl for
    /// `lease`, as `holder` (a name unique to one reader, such as its host,
    /// process and start time). One reader at a time: two that each wrote a page
    /// before removing it would both write the same results. `Ok(None)`:
    /// `holder` holds it; `Ok(Some(other))`: `other` does (until it gives it
    /// back or its lease ends). The hold is a key with a lease in Redis, so
    /// a reader that died frees it when the lease ends.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn hold_remover(
        &self,
        holder: &str,
        lease: Duration,
    ) -> Result<Option<String>, ReplayError> {
        // At least a millisecond: 0 gives the hold back.
        self.remover(holder, &millis(lease).max(1).to_string())
    }

    /// Give back the hold of [`CrawlQueue::hold_remover`], if `holder` has
    /// it.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn release_remover(&self, holder: &str) -> Result<(), ReplayError> {
        self.remover(holder, "0").map(drop)
    }

    fn remover(&self, holder: &str, ms: &str) -> Result<Option<String>, ReplayError> {
        let key = self.key("remover");
        let r = self.client.eval(
            &REMOVER,
            &[key.as_slice()],
            &[holder.as_bytes(), ms.as_bytes()],
            None,
        )?;
        Ok(text(&r).filter(|other| !other.is_empty()))
    }

    /// The figures of `agentsig crawl status`.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn status(&self) -> Result<CrawlStatus, ReplayError> {
        let q = |args: &[&[u8]]| self.client.query(args, None);
        let count = |r: Reply| int(&r).and_then(|n| u64::try_from(n).ok()).unwrap_or(0);
        let keys: Vec<&[u8]> = self.shard_keys().collect();
        let figures = self
            .client
            .eval(&STREAM_FIGURES, &keys, &[GROUP.as_bytes()], None)?;
        let figures = array(&figures);
        if figures.len() != SHARDS {
            return Err(self.client.unavailable(format!(
                "unexpected reply to the stream figures {figures:?}"
            )));
        }
        let lengths: Vec<u64> = figures
            .iter()
            .map(|f| array(f).first().and_then(int).unwrap_or(0).unsigned_abs())
            .collect();
        // No worker is named "" (a consumer name is not empty): this reads
        // the live workers without joining them.
        let members = self.members("", Duration::ZERO)?;
        let workers = members
            .iter()
            .map(|w| {
                let own = own_shards(&members, w);
                let queued = own.iter().map(|&x| lengths[usize::from(x)]).sum();
                (w.clone(), own.len(), queued)
            })
            .collect();
        let mut s = CrawlStatus {
            queued: lengths.iter().sum(),
            workers,
            results: count(q(&[b"XLEN", &self.key("results")])?),
            inputs: count(q(&[b"SCARD", &self.key("seen")])?),
            stopped: self.stopped()?,
            results_reader: text(&q(&[b"GET", &self.key("remover")])?),
            ..CrawlStatus::default()
        };
        let mut by_worker = std::collections::BTreeMap::<String, u64>::new();
        for f in figures {
            let f = array(f);
            s.pending += f.get(1).and_then(int).unwrap_or(0).unsigned_abs();
            for c in f.get(2).map(array).unwrap_or_default() {
                if let [name, n] = array(c) {
                    *by_worker.entry(text(name).unwrap_or_default()).or_default() +=
                        int(n).unwrap_or(0).unsigned_abs();
                }
            }
        }
        s.pending_by_worker = by_worker.into_iter().collect();
        let newest = RECENT.to_string();
        let recent = q(&[
            b"XREVRANGE",
            &self.key("results"),
            b"+",
            b"-",
            b"COUNT",
            newest.as_bytes(),
        ])?;
        // And the newest of those taken out of the stream: the rate of a
        // crawl whose results a reader takes out as they come.
        let removed = q(&[b"LRANGE", &self.key("recent"), b"0", b"-1"])?;
        let mut ids: Vec<u64> = array(&recent)
            .iter()
            .filter_map(|e| array(e).first().and_then(text))
            .chain(array(&removed).iter().filter_map(text))
            .filter_map(|t| id_ms(&t))
            .collect();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        ids.truncate(RECENT);
        let time = q(&[b"TIME"])?;
        let now = array(&time)
            .first()
            .and_then(int)
            .map(|s| s.unsigned_abs() * 1000);
        if let (Some(&last), Some(&first), Some(now)) = (ids.first(), ids.last(), now) {
            let span = last.saturating_sub(first).max(1);
            #[allow(clippy::cast_precision_loss)]
            let rate = (ids.len().saturating_sub(1)) as f64 * 1000.0 / span as f64;
            s.recent_rate = Some((rate, now.saturating_sub(last)));
        }
        for (k, v) in pairs(&q(&[b"HGETALL", &self.key("stats")])?) {
            s.counters.push((k, int(v).unwrap_or(0)));
        }
        s.counters.sort();
        // Results taken out of the stream still count (read with the other
        // counters, not asked for apart).
        s.results_removed = s
            .counters
            .iter()
            .find(|(k, _)| k == "removed")
            .map_or(0, |(_, n)| n.unsigned_abs());
        s.results += s.results_removed;
        // The hosts that waited longest, not every host (a sorted set read
        // from its top), and their counts of waits in one round trip.
        let most = (STATUS_HOSTS - 1).to_string();
        let top = q(&[
            b"ZREVRANGE",
            &self.key("waits:ms"),
            b"0",
            most.as_bytes(),
            b"WITHSCORES",
        ])?;
        let top: Vec<(String, u64)> = array(&top)
            .chunks_exact(2)
            .filter_map(|p| {
                let ms = text(&p[1])?.parse::<f64>().ok()?;
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                Some((text(&p[0])?, ms.max(0.0) as u64))
            })
            .collect();
        if !top.is_empty() {
            let key = self.key("waits:n");
            let mut args: Vec<&[u8]> = vec![b"HMGET", &key];
            args.extend(top.iter().map(|(h, _)| h.as_bytes()));
            let counts = q(&args)?;
            let counts = array(&counts);
            for (i, (host, ms)) in top.into_iter().enumerate() {
                let n = counts
                    .get(i)
                    .and_then(text)
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0);
                s.host_waits.push((host, ms, n));
            }
        }
        s.hosts_waited = count(q(&[b"ZCARD", &self.key("waits:ms")])?);
        Ok(s)
    }

    /// Whether the crawl is in Redis: its input streams were made by
    /// [`CrawlQueue::create`] (`crawl add`, a worker's start) and not
    /// deleted since. A name mistyped finds none.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn exists(&self) -> Result<bool, ReplayError> {
        let first = self.shard_keys().next().unwrap_or_default();
        let r = self.client.query(&[b"EXISTS", first], None)?;
        Ok(int(&r).is_some_and(|n| n > 0))
    }

    /// Delete every key of the crawl (its queue, results and counters),
    /// but for its per-host politeness state, which ends by itself: a
    /// host's connection permits (each with its lease), the time of its
    /// next connection (a `Retry-After` included), its wake list (within
    /// a minute) and its flag that a worker waits for it (a second). A
    /// connection a worker may still hold stays
    /// counted against the host's bound, and a host's `Retry-After` stays
    /// honoured, by a crawl made again under the same name.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when Redis cannot be reached.
    pub fn delete(&self) -> Result<(), ReplayError> {
        // `inputs`: the one input stream of a crawl queued by a release
        // before the input streams were split by host; `waits`: the
        // per-host waits of a release before `waits:ms` and `waits:n`.
        let named = [
            "inputs",
            "results",
            "done",
            "seen",
            "tries",
            "postponed",
            "why",
            "stats",
            "waits",
            "waits:ms",
            "waits:n",
            "state",
            "members",
            "recent",
            "remover",
        ]
        .map(|k| self.key(k));
        // `UNLINK`, not `DEL`: Redis frees a large key (the `done` hash
        // and the `seen` set of a crawl of millions of inputs) in the
        // background, where `DEL` would hold every client of this Redis
        // while it frees it. One command: the keys share one hash slot.
        let mut args: Vec<&[u8]> = vec![b"UNLINK"];
        args.extend(named.iter().map(Vec::as_slice));
        args.extend(self.shard_keys());
        self.client.query(&args, None)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_and_ids() {
        assert!(check_crawl_name("daily-2026.12.02_a").is_ok());
        for bad in ["", "a{b}", "a b", "x:y", &"n".repeat(65)] {
            assert!(check_crawl_name(bad).is_err(), "{bad}");
        }
        let q = CrawlQueue::open("redis://127.0.0.1:1/0", "daily").unwrap();
        assert_eq!(q.key_name("inputs"), "agentsig:crawl:{daily}:inputs");
        assert_eq!(input_id("https://a.example/").len(), 32);
        assert_ne!(
            input_id("https://a.example/"),
            input_id("https://b.example/")
        );
        assert_eq!(host_hash("a.example:443").len(), 24);
    }

    #[test]
    fn ids_are_the_lowercase_hex_of_the_sha256_prefix() {
        // FIPS 180-2 appendix B.1: SHA-256("abc").
        assert_eq!(input_id("abc"), "ba7816bf8f01cfea414140de5dae2223");
        assert_eq!(host_hash("abc"), "ba7816bf8f01cfea414140de");
        assert_eq!(lower_hex(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
    }

    /// All inputs of one host share a stream, whatever their path, scheme
    /// spelling, user information or default port; the stream is the
    /// SHA-256 of the host (stable across builds and machines).
    #[test]
    fn an_input_goes_to_the_stream_of_its_host() {
        let a = shard_of("https://agents.example/a.json");
        for same in [
            "https://agents.example/b/c.json?x=1",
            "https://Agents.Example",
            "https://agents.example:443/",
            "https://user@agents.example/#f",
            "agents.example/d",
            "https://agents.example\\e",
        ] {
            assert_eq!(shard_of(same), a, "{same}");
        }
        assert_eq!(
            input_host("https://agents.example:8443/x"),
            "agents.example:8443"
        );
        // SHA-256("agents.example"), its first two bytes modulo 64.
        let d = Sha256::digest(b"agents.example");
        assert_eq!(
            usize::from(a),
            usize::from(u16::from_be_bytes([d[0], d[1]])) % SHARDS
        );
        // Hosts spread over the streams.
        let used: HashSet<u16> = (0..1000)
            .map(|i| shard_of(&format!("https://h{i}.example/")))
            .collect();
        assert_eq!(used.len(), SHARDS);
        assert!(used.iter().all(|&x| usize::from(x) < SHARDS));
    }

    /// Every stream is one live worker's; shares differ by at most one; a
    /// worker not yet among the members counts itself; a worker reads its
    /// own streams, each once.
    #[test]
    fn each_stream_is_one_workers_own() {
        for n in [1, 2, 3, 5, 64, 70] {
            let members: Vec<String> = (0..n).map(|i| format!("w{i}")).collect();
            let mut owner = vec![None; SHARDS];
            let mut sizes = Vec::new();
            for m in &members {
                let own = own_shards(&members, m);
                sizes.push(own.len());
                for x in own {
                    assert!(owner[usize::from(x)].replace(m.clone()).is_none());
                }
            }
            assert!(owner.iter().all(Option::is_some), "{n} workers");
            let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(hi - lo <= 1, "{n} workers: {sizes:?}");
        }
        let members = vec!["a".to_owned(), "c".to_owned()];
        // "b" is second of three: the streams 1, 4, ... 61.
        assert_eq!(own_shards(&members, "b").len(), 21);
        let own = own_shards(&members, "a");
        assert_eq!(read_order(&own), own);
        // Each stream once, the crawl's only; none: every stream.
        assert_eq!(read_order(&[5, 5, 99, 6]), [5, 6]);
        let all: HashSet<u16> = read_order(&[]).into_iter().collect();
        assert_eq!(all.len(), SHARDS);
        assert_eq!(read_order(&[99]).len(), SHARDS);
    }

    #[test]
    fn stream_entries_are_read_field_by_field() {
        let b = |s: &str| Reply::Bulk(Some(s.as_bytes().to_vec()));
        let e = Reply::Array(Some(vec![
            b("1-0"),
            Reply::Array(Some(vec![
                b("id"),
                b("abc"),
                b("input"),
                b("https://a.example/"),
                b("depth"),
                b("2"),
                b("attempt"),
                b("1"),
            ])),
        ]));
        let got = entry(&e, 7).unwrap();
        assert_eq!(
            (
                got.entry.as_str(),
                got.shard,
                got.id.as_str(),
                got.depth,
                got.attempt
            ),
            ("1-0", 7, "abc", 2, 1)
        );
        // A deleted entry (nil fields) or a malformed one is skipped.
        assert!(entry(&Reply::Array(Some(vec![b("1-0"), Reply::Bulk(None)])), 0).is_none());
        assert!(entry(&b("x"), 0).is_none());
        assert_eq!(id_ms("1700000000123-4"), Some(1_700_000_000_123));
    }

    /// MessagePack as `cmsgpack.pack` writes it (MessagePack specification,
    /// "Formats"): the shortest form of each value.
    fn pack_str(out: &mut Vec<u8>, s: &str) {
        let n = s.len();
        match n {
            0..=31 => out.push(0xa0 | n as u8),
            32..=0xff => out.extend([0xd9, n as u8]),
            _ => {
                out.push(0xda);
                out.extend((n as u16).to_be_bytes());
            }
        }
        out.extend(s.as_bytes());
    }

    fn pack_array(out: &mut Vec<u8>, n: usize) {
        if n < 16 {
            out.push(0x90 | n as u8);
        } else {
            out.push(0xdc);
            out.extend((n as u16).to_be_bytes());
        }
    }

    fn pack_int(out: &mut Vec<u8>, v: i64) {
        match v {
            0..=127 => out.push(v as u8),
            -32..=-1 => out.push(v as u8),
            128..=255 => out.extend([0xcc, v as u8]),
            256..=65535 => {
                out.push(0xcd);
                out.extend((v as u16).to_be_bytes());
            }
            -128..=-33 => out.extend([0xd0, v as u8]),
            _ => {
                out.push(0xd3);
                out.extend(v.to_be_bytes());
            }
        }
    }

    /// The script's reply: `written`, then `taken` (entry id, fields,
    /// attempts, and stream 3), then `stopped`.
    fn packed(written: &[i64], taken: &[(&str, &[&str], i64)], stopped: i64) -> Vec<u8> {
        let taken: Vec<_> = taken.iter().map(|&(id, f, n)| (id, f, n, 3)).collect();
        packed_from(written, &taken, stopped)
    }

    fn packed_from(written: &[i64], taken: &[(&str, &[&str], i64, i64)], stopped: i64) -> Vec<u8> {
        let mut out = Vec::new();
        pack_array(&mut out, written.len());
        for &w in written {
            pack_int(&mut out, w);
        }
        pack_array(&mut out, taken.len());
        for (id, fields, n, shard) in taken {
            pack_array(&mut out, 4);
            pack_str(&mut out, id);
            pack_array(&mut out, fields.len());
            for f in *fields {
                pack_str(&mut out, f);
            }
            pack_int(&mut out, *n);
            pack_int(&mut out, *shard);
        }
        pack_int(&mut out, stopped);
        out
    }

    #[test]
    fn the_packed_take_is_read_value_by_value() {
        let long = format!("https://a.example/{}", "p".repeat(300));
        let r = packed(
            &[1, 0, 1],
            &[
                (
                    "1700000000000-0",
                    &["id", "abc", "input", &long, "depth", "2", "attempt", "1"],
                    300,
                ),
                // A duplicate: acknowledged, no attempt started.
                (
                    "1700000000000-1",
                    &["input", "https://b.example/", "id", "def"],
                    -1,
                ),
                // A deleted entry (no fields) and one without its id: skipped.
                ("1700000000000-2", &[], 4),
                ("1700000000000-3", &["input", "https://c.example/"], 1),
                // An attempt count the script never gives: skipped.
                (
                    "1700000000000-4",
                    &["id", "x", "input", "https://d.example/"],
                    0,
                ),
            ],
            0,
        );
        let got = read_finish_take(&r, 3).unwrap();
        assert_eq!(
            got.finished,
            [Finished::Written, Finished::Duplicate, Finished::Written]
        );
        assert!(!got.stopped);
        assert_eq!(got.taken.len(), 2);
        let (e, n) = &got.taken[0];
        assert_eq!(
            (
                e.entry.as_str(),
                e.shard,
                e.id.as_str(),
                e.input.as_str(),
                e.depth,
                e.attempt,
                *n
            ),
            ("1700000000000-0", 3, "abc", long.as_str(), 2, 1, Some(300))
        );
        let (e, n) = &got.taken[1];
        assert_eq!(
            (e.id.as_str(), e.input.as_str(), e.depth, e.attempt, *n),
            ("def", "https://b.example/", 0, 0, None)
        );
        // Stopped: nothing taken. Sixteen or more values: the 16-bit array.
        let got = read_finish_take(&packed(&[0; 20], &[], 1), 20).unwrap();
        assert_eq!(got.finished, [Finished::Duplicate; 20]);
        assert!(got.stopped && got.taken.is_empty());
        // Every integer width cmsgpack may use, and both string families.
        for (bytes, v) in [
            (&[0xcc, 0xff][..], 255),
            (&[0xcd, 0x01, 0x00][..], 256),
            (&[0xce, 0, 1, 0, 0][..], 65536),
            (&[0xcf, 0, 0, 0, 1, 0, 0, 0, 0][..], 1 << 32),
            (&[0xd0, 0x80][..], -128),
            (&[0xd1, 0xff, 0x7f][..], -129),
            (&[0xd2, 0xff, 0xff, 0x7f, 0xff][..], -32769),
            (
                &[0xd3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe][..],
                -2,
            ),
            (&[0xe0][..], -32),
        ] {
            assert_eq!(Unpack { b: bytes, at: 0 }.int(), Ok(v), "{bytes:x?}");
        }
        for bytes in [
            &b"\xa2ab"[..],
            b"\xd9\x02ab",
            b"\xda\0\x02ab",
            b"\xc4\x02ab",
        ] {
            assert_eq!(Unpack { b: bytes, at: 0 }.str(), Ok(&b"ab"[..]));
        }
    }

    #[test]
    fn a_malformed_take_is_an_error() {
        let good = packed(
            &[1],
            &[("1-0", &["id", "abc", "input", "https://a.example/"], 1)],
            0,
        );
        assert!(read_finish_take(&good, 1).is_ok());
        // Cut anywhere: an error, never a panic.
        for end in 0..good.len() {
            assert!(read_finish_take(&good[..end], 1).is_err(), "cut at {end}");
        }
        let mut longer = good.clone();
        longer.push(0);
        let bad: Vec<(Vec<u8>, usize, &str)> = vec![
            (longer, 1, "bytes after the reply"),
            // Not one value per result given.
            (good.clone(), 2, "not one value per result"),
            (
                packed(&[2], &[], 0),
                1,
                "a result neither written nor a duplicate",
            ),
            // A string where the results' array is.
            (b"\xa1x".to_vec(), 0, "not an array"),
            // Array and string lengths past the end: refused, nothing
            // allocated for them.
            (
                vec![0xdd, 0xff, 0xff, 0xff, 0xff],
                0,
                "a length past the end",
            ),
            (
                vec![0x90, 0x91, 0x94, 0xdb, 0xff, 0xff, 0xff, 0xff, b'x'],
                0,
                "a length past the end",
            ),
            // An entry of three values (the attempts and no stream), and
            // fields without their values.
            (
                vec![0x90, 0x91, 0x93, 0xa1, b'1', 0x90, 0x01, 0x00],
                0,
                "an entry taken not [id, fields, attempts, stream]",
            ),
            (
                vec![
                    0x90, 0x91, 0x94, 0xa1, b'1', 0x91, 0xa2, b'i', b'd', 0x01, 0x00, 0x00,
                ],
                0,
                "an odd number of field names and values",
            ),
            // A float for the attempts, nil for a field value.
            (
                vec![
                    0x90, 0x91, 0x94, 0xa1, b'1', 0x90, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00,
                ],
                0,
                "not an integer",
            ),
            (
                vec![
                    0x90, 0x91, 0x94, 0xa1, b'1', 0x92, 0xa2, b'i', b'd', 0xc0, 0x01, 0x00, 0x00,
                ],
                0,
                "not a string",
            ),
            // A stream number outside the crawl's, and a negative one.
            (
                packed_from(&[], &[("1-0", &["id", "a", "input", "b"], 1, 64)], 0),
                0,
                "an entry's input stream not one of the crawl's",
            ),
            (
                packed_from(&[], &[("1-0", &["id", "a", "input", "b"], 1, -1)], 0),
                0,
                "an entry's input stream not one of the crawl's",
            ),
            (
                vec![0x90, 0x90, 0xcf, 0xff, 0, 0, 0, 0, 0, 0, 0],
                0,
                "an integer out of range",
            ),
        ];
        for (reply, results, why) in bad {
            let e = read_finish_take(&reply, results).unwrap_err();
            assert_eq!(e.why, why, "{reply:x?}");
            assert!(e.at <= reply.len());
        }
    }
}
