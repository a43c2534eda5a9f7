//! Structured-field work done while the signature base is
//! built is bounded. No timing assertions: the attack request must be refused
//! with the typed limit error, and a large-but-legal dictionary must still
//! normalize exactly as RFC 9651 section 4.2.2 says.

use agentsig::httpsig::components::ComponentError;
use agentsig::httpsig::{HttpPolicy, HttpSigError, Message, SigError};
use agentsig::keys::{load_signing_key, LoadOptions};
use agentsig::sfv::{self, Entry, SfError, MAX_MEMBERS};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;

/// A trusted key for keyid "k": the attacker needs only a known keyid, the
/// base is built before the signature is checked.
fn keys() -> StaticKeys {
    let k = load_signing_key(
        &std::fs::read("keys/rfc9421/test-key-ed25519.pem").unwrap(),
        &LoadOptions::default(),
    )
    .unwrap();
    StaticKeys::new().with(k.verifying_key().clone().with_kid("k"), KeySource::Pinned)
}

/// A short distinct sf-key for `n` (base-26 letters).
fn key(mut n: usize) -> String {
    let mut s = String::new();
    loop {
        s.push(char::from(b'a' + (n % 26) as u8));
        n /= 26;
        if n == 0 {
            return s;
        }
    }
}

#[test]
fn attack_request_with_12700_members_is_refused_with_limit_error() {
    let members: Vec<String> = (0..12_700).map(key).collect();
    let dict = members.join(",");
    assert!(dict.len() < 64 * 1024);
    let mut covered: Vec<String> = (0..63)
        .map(|i| format!("\"x\";key=\"{}\"", key(i * 197)))
        .collect();
    covered.push("\"@method\"".into());
    let raw = format!(
        "GET / HTTP/1.1\r\nHost: example.com\r\nX: {dict}\r\nSignature-Input: sig1=({});created=1;keyid=\"k\"\r\nSignature: sig1=:YWJj:\r\n\r\n",
        covered.join(" ")
    );
    let msg = Message::parse(raw.as_bytes(), "https").unwrap();
    let mut p = HttpPolicy::new();
    p.check_time = false;
    p.required = Vec::new();
    let v = Verifier::builder(keys()).http(p).build();
    let report = match v.verify_http(&msg, None) {
        Err(HttpSigError::NotVerified(r)) => r,
        other => panic!("expected a refusal with a report, got {other:?}"),
    };
    let r = report.get("sig1").unwrap();
    match &r.outcome {
        Err(SigError::Component(ComponentError::Structured { err, .. })) => {
            assert_eq!(*err, SfError::TooManyMembers)
        }
        other => panic!("expected the member limit error, got {other:?}"),
    }
}

#[test]
fn too_many_params_and_inner_items_are_typed_errors() {
    let params: String = (0..=sfv::MAX_PARAMS)
        .map(|i| format!(";{}", key(i)))
        .collect();
    assert_eq!(
        sfv::parse_item(format!("a{params}").as_bytes()),
        Err(SfError::TooManyParams)
    );
    let items: Vec<String> = (0..=sfv::MAX_INNER_LIST).map(|_| "1".to_string()).collect();
    assert_eq!(
        sfv::parse_list(format!("({})", items.join(" ")).as_bytes()),
        Err(SfError::TooManyInnerItems)
    );
    let list: Vec<String> = (0..=MAX_MEMBERS).map(|_| "1".to_string()).collect();
    assert_eq!(
        sfv::parse_list(list.join(",").as_bytes()),
        Err(SfError::TooManyMembers)
    );
    assert_eq!(
        sfv::parse_list(list[1..].join(",").as_bytes()).map(|l| l.len()),
        Ok(MAX_MEMBERS)
    );
}

#[test]
fn large_legal_dictionary_normalizes_last_wins_first_position() {
    // 1024 members, 512 distinct keys each given twice: the second value wins
    // and the first position is kept (RFC 9651 section 4.2.2).
    let half = MAX_MEMBERS / 2;
    let mut parts = Vec::new();
    for i in 0..half {
        parts.push(format!("{}={}", key(i), i));
    }
    for i in (0..half).rev() {
        parts.push(format!("{}={};p=1;p=2", key(i), i + 10_000));
    }
    let d = sfv::parse_dictionary(parts.join(", ").as_bytes()).unwrap();
    assert_eq!(d.0.len(), half);
    for (i, (k, v)) in d.0.iter().enumerate() {
        assert_eq!(*k, key(i));
        match v {
            Entry::Item(it) => {
                assert_eq!(it.bare, sfv::BareItem::Integer((i + 10_000) as i64));
                assert_eq!(it.params.len(), 2, "params are kept raw until serialized");
            }
            Entry::InnerList(_) => panic!("item expected"),
        }
    }
    let mut out = String::new();
    sfv::write_dictionary(&mut out, &d);
    let expected: Vec<String> = (0..half)
        .map(|i| format!("{}={};p=2", key(i), i + 10_000))
        .collect();
    assert_eq!(out, expected.join(", "));
    let raw = sfv::parse_dictionary_raw(parts.join(", ").as_bytes()).unwrap();
    assert_eq!(raw.first_duplicate(), Some(key(half - 1).as_str()));
}

/// Each field's `;key` dictionary is parsed once per signature base (cached
/// by `;req`, `;tr` and name). Guard: the cache never serves one field's
/// dictionary for another form of it. (Its effect, 755 ms -> 8.5 ms for 16
/// labels x 63 `;key` over a 64 KB field in release, is measured, not
/// asserted: no timing assertions.)
#[test]
fn key_components_resolve_per_field_form() {
    use agentsig::httpsig::base;
    use agentsig::httpsig::message::Field;
    use agentsig::httpsig::ComponentId;
    let raw = "GET / HTTP/1.1\r\nHost: example.com\r\nX: a=1, b=2\r\nY: a=9\r\n\r\n";
    let mut m = Message::parse(raw.as_bytes(), "https").unwrap();
    m.trailers.push(Field {
        name: "x".into(),
        value: b"a=3".to_vec(),
    });
    let covered: Vec<ComponentId> = [
        "\"x\";key=\"a\"",
        "\"x\";key=\"b\"",
        "\"x\";key=\"a\";tr",
        "\"y\";key=\"a\"",
    ]
    .iter()
    .map(|c| ComponentId::parse(c).unwrap())
    .collect();
    let pv = base::signature_params_value(&covered, &Vec::new());
    let b = base::signature_base(&m, None, &covered, &pv, &|_| None).unwrap();
    let b = String::from_utf8(b).unwrap();
    let lines: Vec<&str> = b.lines().collect();
    assert_eq!(
        lines[..4],
        [
            "\"x\";key=\"a\": 1",
            "\"x\";key=\"b\": 2",
            "\"x\";key=\"a\";tr: 3",
            "\"y\";key=\"a\": 9"
        ]
    );
    let c = ComponentId::parse("\"x\";key=\"zz\"").unwrap();
    let pv = base::signature_params_value(std::slice::from_ref(&c), &Vec::new());
    assert!(matches!(
        base::signature_base(&m, None, &[c], &pv, &|_| None),
        Err(ComponentError::KeyMissing { .. })
    ));
}

/// The worst case within the size limits: 16 labels, each covering two
/// large fields with `;sf` and 55 `;key` members of them (two ~55 KB
/// Dictionaries). Every field is parsed once per message (not once per
/// label and parameter), and the signature bases of all labels share the
/// `MAX_BASE_BYTES` budget: once it is spent, the remaining labels fail with
/// the typed `WorkBudget` error instead of building more bases. No timing
/// assertion: the budget error is the observable bound.
#[test]
fn worst_case_labels_hit_the_per_message_work_budget() {
    use agentsig::httpsig::MAX_BASE_BYTES;
    let long = "v".repeat(48);
    let dict = |tag: &str| -> String {
        (0..1000)
            .map(|i| format!("{}=\"{tag}{long}\"", key(i)))
            .collect::<Vec<_>>()
            .join(",")
    };
    let (x, y) = (dict("x"), dict("y"));
    assert!(x.len() > 52 * 1024 && x.len() < 64 * 1024, "{}", x.len());
    let label_input = |l: usize| {
        let mut c = vec![
            "\"@method\"".to_owned(),
            "\"x\";sf".to_owned(),
            "\"y\";sf".to_owned(),
        ];
        c.extend((0..55).map(|i| format!("\"x\";key=\"{}\"", key(i * 17))));
        format!("s{l}=({});created=1;keyid=\"k\"", c.join(" "))
    };
    let inputs: Vec<String> = (0..16).map(label_input).collect();
    let sigs: Vec<String> = (0..16).map(|l| format!("s{l}=:YWJj:")).collect();
    let raw = format!(
        "GET / HTTP/1.1\r\nHost: example.com\r\nX: {x}\r\nY: {y}\r\nSignature-Input: {}\r\nSignature: {}\r\n\r\n",
        inputs.join(", "),
        sigs.join(", ")
    );
    let msg = Message::parse(raw.as_bytes(), "https").unwrap();
    let mut p = HttpPolicy::new();
    p.check_time = false;
    p.required = Vec::new();
    let v = Verifier::builder(keys()).http(p).build();
    let report = match v.verify_http(&msg, None) {
        Err(HttpSigError::NotVerified(r)) => r,
        other => panic!("expected a refusal with a report, got {other:?}"),
    };
    let outcomes: Vec<&Result<(), SigError>> = (0..16)
        .map(|l| &report.get(&format!("s{l}")).unwrap().outcome)
        .collect();
    let budget = |o: &&Result<(), SigError>| {
        matches!(
            o,
            Err(SigError::Component(ComponentError::WorkBudget { budget })) if *budget == MAX_BASE_BYTES
        )
    };
    // The first labels are examined in full (and fail on the fake
    // signature); the budget stops the rest.
    assert!(
        matches!(outcomes[0], Err(SigError::BadSignature)),
        "{:?}",
        outcomes[0]
    );
    let first_over = outcomes
        .iter()
        .position(budget)
        .expect("no label hit the budget");
    assert!(first_over > 0 && first_over < 16, "{first_over}");
    assert!(outcomes[first_over..].iter().all(budget), "{outcomes:?}");
    assert_eq!(
        report
            .get("s15")
            .unwrap()
            .outcome
            .as_ref()
            .unwrap_err()
            .code(),
        "work-budget"
    );
}
