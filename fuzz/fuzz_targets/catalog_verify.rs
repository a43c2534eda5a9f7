//! Any bytes as an AI Catalog (`Verifier::verify_catalog`): at hand, and
//! with a fetcher that serves the same bytes for every URL, so that nested
//! catalogs by `url`, cards by `url`, fetched digests and attestation
//! documents are walked too (every third fetch fails, to reach the error
//! paths). Trusted keys: the example key set, so the seeded examples
//! verify. Asserts: never a panic; the same bytes get the same verdict
//! twice; the walk fetches at most `max_fetches` documents.
#![no_main]
use agentsig::catalog::{CatalogOptions, Fetch};
use agentsig::trust::KeySource;
use agentsig::Verifier;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

/// Serves `body` for any URL, counting the calls.
struct Echo<'a> {
    body: &'a [u8],
    calls: usize,
}

impl Fetch for Echo<'_> {
    fn fetch(&mut self, _url: &str, _accept: &str) -> Result<Vec<u8>, String> {
        self.calls += 1;
        if self.calls % 3 == 0 {
            return Err("not served".into());
        }
        Ok(self.body.to_vec())
    }
}

fn verifier() -> &'static Verifier {
    static V: OnceLock<Verifier> = OnceLock::new();
    V.get_or_init(|| {
        let jwks = include_bytes!("../../keys/example-p256.jwks.json");
        let keys = agentsig::trust::StaticKeys::from_jwks(
            jwks,
            KeySource::Jwks("example-p256.jwks.json".into()),
            None,
        )
        .expect("the example key set")
        .keys;
        Verifier::builder(keys).build()
    })
}

fuzz_target!(|data: &[u8]| {
    let v = verifier();
    let mut opts = CatalogOptions::default();
    opts.max_fetches = 16;
    opts.max_entries = 512;
    let once = v.verify_catalog(data, &opts);
    let twice = v.verify_catalog(data, &opts);
    match (&once, &twice) {
        (Ok(a), Ok(b)) => assert_eq!(a.verified(), b.verified(), "one verdict for one input"),
        (Err(_), Err(_)) => {}
        _ => panic!("the same bytes read twice: one error, one report"),
    }
    let mut strict = CatalogOptions::default().require_signed(true);
    strict.max_fetches = opts.max_fetches;
    strict.max_entries = opts.max_entries;
    let mut echo = Echo {
        body: data,
        calls: 0,
    };
    let _ = v.verify_catalog_from(
        data,
        "https://catalog.example/.well-known/ai-catalog.json",
        &mut echo,
        &strict,
    );
    assert!(
        echo.calls <= opts.max_fetches,
        "{} fetches, bound {}",
        echo.calls,
        opts.max_fetches
    );
});
