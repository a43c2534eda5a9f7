//! Differential test of `agentsig::sfv` (RFC 8941 / RFC 9651) against the
//! `sfv` crate (crates.io, RFC 9651 mode): on every header field value of
//! the RFC 9421 component examples and test messages, plus a few thousand
//! deterministic mutations of them and of hand-written seeds, parsed as
//! Dictionary, List and Item, both must agree on accept/reject and, when
//! both accept, on the serialized form (RFC 9651 section 4.1).
//!
//! Intentional differences, each asserted where it occurs (never skipped):
//! * LIMITS: agentsig refuses more than `MAX_MEMBERS` (1024) List or
//!   Dictionary members, `MAX_PARAMS` (256) parameters on one item and
//!   `MAX_INNER_LIST` (256) inner-list items (the RFC 9651 section 3
//!   minimums) and inputs over `MAX_SF_LEN`; the `sfv`
//!   crate has no limits. Asserted: ours fails with exactly the limit error
//!   and the `sfv` crate accepts.
//! * BYTESEQ: agentsig refuses a Byte Sequence that is not canonical padded
//!   base64 (missing `=` padding, non-zero pad bits); RFC 9651 section 4.2.7
//!   says parsers SHOULD NOT fail on those, and the `sfv` crate accepts them
//!   and re-serializes canonically. Kept on purpose: a non-canonical value
//!   is a second spelling of the same bytes (malleable signed fields,
//!   digests). Asserted: ours fails with exactly that syntax error, the
//!   `sfv` crate accepts. Note: the RFC 9421 Appendix B.3 `Client-Cert`
//!   value is such a case (non-zero pad bits).
//! * EMPTY: the `sfv` crate serializes an empty List or Dictionary as
//!   `None` (RFC 9651 section 4.1: "do not serialize the field"); agentsig
//!   writes the empty string. Compared as equal.
//!
//! Duplicate keys are NOT a difference at this level: both apply "last value
//! wins, first position kept" (RFC 9651 section 4.2.2); agentsig's stricter
//! refusal of duplicate labels lives in its callers (`first_duplicate`).

use agentsig::sfv::{self as ours, SfError};
use sfv::{FieldType, Parser};

#[derive(Clone, Copy, Debug)]
enum Ty {
    Dict,
    List,
    Item,
}

/// Serialized form, or the error.
fn ours_parse(ty: Ty, input: &[u8]) -> Result<String, SfError> {
    let mut s = String::new();
    match ty {
        Ty::Dict => ours::write_dictionary(&mut s, &ours::parse_dictionary(input)?),
        Ty::List => ours::write_list(&mut s, &ours::parse_list(input)?),
        Ty::Item => ours::write_item(&mut s, &ours::parse_item(input)?),
    }
    Ok(s)
}

/// Serialized form (EMPTY: `None` mapped to ""), or the error text.
fn theirs_parse(ty: Ty, input: &[u8]) -> Result<String, String> {
    let p = Parser::new(input);
    let r = match ty {
        Ty::Dict => p
            .parse::<sfv::Dictionary>()
            .map(|d| d.serialize().unwrap_or_default()),
        Ty::List => p
            .parse::<sfv::List>()
            .map(|l| l.serialize().unwrap_or_default()),
        Ty::Item => p.parse::<sfv::Item>().map(|i| i.serialize()),
    };
    r.map_err(|e| e.to_string())
}

#[derive(Default)]
struct Tally {
    compared: usize,
    both_ok: usize,
    limit_exceptions: usize,
    byteseq_exceptions: usize,
}

const NOT_CANONICAL_B64: &str = "byte sequence is not canonical padded base64";

fn compare(ty: Ty, input: &[u8], t: &mut Tally) {
    t.compared += 1;
    let a = ours_parse(ty, input);
    let b = theirs_parse(ty, input);
    match (&a, &b) {
        (Ok(x), Ok(y)) => {
            t.both_ok += 1;
            assert_eq!(x, y, "{ty:?} {:?}: serializations differ", lossy(input));
            // Round trip: our output re-parses to itself.
            assert_eq!(
                ours_parse(ty, x.as_bytes()).as_ref(),
                Ok(x),
                "{ty:?} {:?}: re-parse differs",
                lossy(input)
            );
        }
        (Err(_), Err(_)) => {}
        (
            Err(
                SfError::TooManyMembers
                | SfError::TooManyParams
                | SfError::TooManyInnerItems
                | SfError::TooLong,
            ),
            Ok(_),
        ) => t.limit_exceptions += 1, // LIMITS
        (Err(SfError::Syntax { what, .. }), Ok(_)) if *what == NOT_CANONICAL_B64 => {
            t.byteseq_exceptions += 1 // BYTESEQ
        }
        _ => panic!(
            "{ty:?} {:?}: accept/reject differs: agentsig {a:?}, sfv crate {b:?}",
            lossy(input)
        ),
    }
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Field values from the RFC 9421 examples and test messages.
fn rfc9421_values() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut push_lines = |text: &str| {
        for line in text.lines() {
            if let Some((_, v)) = line.split_once(':') {
                out.push(v.trim_matches([' ', '\t', '\r']).as_bytes().to_vec());
            }
        }
    };
    let c: serde_json::Value =
        serde_json::from_slice(&std::fs::read("tests/vectors/rfc9421/components.json").unwrap())
            .unwrap();
    for e in c["examples"].as_array().unwrap() {
        if let Some(i) = e["input"].as_str() {
            push_lines(i);
        }
    }
    for f in std::fs::read_dir("tests/vectors/rfc9421/messages").unwrap() {
        let data = std::fs::read(f.unwrap().path()).unwrap();
        let head = lossy(&data);
        let head = head.split("\r\n\r\n").next().unwrap_or("").to_owned();
        push_lines(&head.replace("\r\n", "\n"));
    }
    out
}

const SEEDS: &[&str] = &[
    "a=1,    b=2;x=1;y=2,   c=(a   b   c)",
    "a=1, b=2;x=1;y=2, c=(a b c), d",
    "sig1=(\"@method\" \"@authority\" \"content-digest\");created=1618884473;keyid=\"test-key\"",
    "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:, sha-512=:YQ==:",
    "1;a=tok, (\"foo\" \"bar\");baz, ()",
    "a=?0, b, c; foo=bar, rating=1.5, fruits=(apple pear)",
    "12.445;foo=bar",
    "-999999999999999, 999999999999.999, 0.0, -0.5",
    "@1659578233, %\"f%c3%bc%c3%bc\", *tok/en:x",
    "\"a\\\\b\\\"c\", :AQID:, ?1;x;y=?0",
    "a=1, a=2, b=(1 2);q=1;q=2",
    "u=2, n=(* foo 2)",
    "   a  ,\tb\t,  c   ",
];

/// Deterministic xorshift64*.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % (n.max(1) as u64)) as usize
    }
}

const ALPHABET: &[u8] = b" \t,;=()\"\\:?*%@-.01239aAzZ_/+";

fn mutate(rng: &mut Rng, seed: &[u8], pool: &[Vec<u8>]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..=rng.below(3) {
        let at = rng.below(v.len() + 1);
        match rng.below(5) {
            0 => v.insert(at, ALPHABET[rng.below(ALPHABET.len())]),
            1 if at < v.len() => {
                v.remove(at);
            }
            2 if at < v.len() => v[at] = ALPHABET[rng.below(ALPHABET.len())],
            3 => {
                // Splice a piece of another value.
                let other = &pool[rng.below(pool.len())];
                let s = rng.below(other.len() + 1);
                let e = s + rng.below(other.len() - s + 1);
                v.splice(at..at, other[s..e].iter().copied());
            }
            _ => {
                // Join with another value (List/Dictionary concatenation).
                v.extend_from_slice(b", ");
                v.extend_from_slice(&pool[rng.below(pool.len())]);
            }
        }
    }
    v
}

#[test]
fn agrees_with_the_sfv_crate_on_rfc9421_examples_and_mutations() {
    let mut pool = rfc9421_values();
    assert!(pool.len() > 50, "RFC 9421 example fields not found");
    pool.extend(SEEDS.iter().map(|s| s.as_bytes().to_vec()));
    let mut t = Tally::default();
    for v in &pool {
        for ty in [Ty::Dict, Ty::List, Ty::Item] {
            compare(ty, v, &mut t);
        }
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..4000 {
        let seed = pool[rng.below(pool.len())].clone();
        let m = mutate(&mut rng, &seed, &pool);
        for ty in [Ty::Dict, Ty::List, Ty::Item] {
            compare(ty, &m, &mut t);
        }
    }
    // The corpus must exercise both outcomes, or the test proves little.
    assert!(
        t.both_ok > 1000,
        "only {} inputs accepted by both",
        t.both_ok
    );
    assert!(
        t.compared - t.both_ok > 1000,
        "only {} inputs refused",
        t.compared - t.both_ok
    );
    assert_eq!(t.limit_exceptions, 0, "no generated input reaches a limit");
    // BYTESEQ occurs (the B.3 Client-Cert value); report how often.
    eprintln!(
        "compared {}, both accepted {}, BYTESEQ exceptions {}",
        t.compared, t.both_ok, t.byteseq_exceptions
    );
    assert!(t.byteseq_exceptions > 0);
}

#[test]
fn listed_exceptions_limits_byteseq_empty_are_asserted() {
    // LIMITS, asserted explicitly: the sfv crate accepts, agentsig refuses.
    let members = vec!["a"; ours::MAX_MEMBERS + 1].join(", ");
    let params: String = (0..=ours::MAX_PARAMS).map(|i| format!(";k{i}")).collect();
    let inner = format!("({})", vec!["1"; ours::MAX_INNER_LIST + 1].join(" "));
    let dict: String = (0..=ours::MAX_MEMBERS)
        .map(|i| format!("k{i}"))
        .collect::<Vec<_>>()
        .join(",");
    let cases: [(Ty, String, SfError); 4] = [
        (Ty::List, members, SfError::TooManyMembers),
        (Ty::Dict, dict, SfError::TooManyMembers),
        (Ty::Item, format!("x{params}"), SfError::TooManyParams),
        (Ty::List, inner, SfError::TooManyInnerItems),
    ];
    for (ty, input, err) in cases {
        assert_eq!(ours_parse(ty, input.as_bytes()), Err(err.clone()), "{ty:?}");
        assert!(theirs_parse(ty, input.as_bytes()).is_ok(), "{ty:?}");
    }
    // At the limit both accept and agree.
    let at = vec!["a"; ours::MAX_MEMBERS].join(", ");
    assert_eq!(
        ours_parse(Ty::List, at.as_bytes()).unwrap(),
        theirs_parse(Ty::List, at.as_bytes()).unwrap()
    );
    // BYTESEQ, asserted explicitly.
    for b in [":YQ:", ":YR==:", ":YWI=:x"] {
        let ours = ours_parse(Ty::Item, b.as_bytes());
        if b == ":YWI=:x" {
            assert!(ours.is_err() && theirs_parse(Ty::Item, b.as_bytes()).is_err());
            continue;
        }
        assert!(
            matches!(&ours, Err(SfError::Syntax { what, .. }) if *what == NOT_CANONICAL_B64),
            "{b}: {ours:?}"
        );
        assert!(theirs_parse(Ty::Item, b.as_bytes()).is_ok(), "{b}");
    }
    // EMPTY: both accept "", sfv says None, agentsig writes "".
    assert_eq!(ours_parse(Ty::Dict, b"").unwrap(), "");
    assert_eq!(
        Parser::new("")
            .parse::<sfv::Dictionary>()
            .unwrap()
            .serialize(),
        None
    );
}
