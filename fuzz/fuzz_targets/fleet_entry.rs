//! Any bytes as an entry of the fleet key-set cache
//! (`FleetCache::decode_entry`): first as the stored value itself (MAC,
//! then payload: refused unless the MAC verifies), then as a payload
//! sealed with the cache's key, so that the payload decoder (JSON, the
//! freshness rules, base64 body, header fields) is reached. Asserts: never
//! a panic; an unsealed value never yields a response; a response yielded
//! is for the URL asked and carries an `Age` field.
#![no_main]
use agentsig::net::fleet::{FleetCache, FleetSecret};
use agentsig::replay::blob::MemoryBlobStore;
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};

const URL: &str = "https://keys.example/.well-known/jwks.json";

fn cache() -> &'static FleetCache {
    static C: OnceLock<FleetCache> = OnceLock::new();
    C.get_or_init(|| {
        let secret = FleetSecret::from_bytes(b"fuzz-fleet-secret-0123456789abcdef".to_vec())
            .expect("secret");
        FleetCache::new(Arc::new(MemoryBlobStore::new()), &secret).on_report(|_| {})
    })
}

fuzz_target!(|data: &[u8]| {
    let c = cache();
    let headers = [("accept", "application/jwk-set+json")];
    assert!(
        c.decode_entry(URL, data, false, &headers).is_none() || data.len() >= 32,
        "a value shorter than its MAC yielded a response"
    );
    if let Some(f) = c.decode_entry(URL, data, true, &headers) {
        assert_eq!(f.url, URL);
        assert!(f.headers.contains_key("age"));
    }
});
