//! The verifiers' notion of the current time, injectable so that tests and
//! audits can check signatures and tokens "as of" a moment (RFC 9421
//! `created`/`expires`, RFC 7519 `exp`/`nbf`/`iat`).

/// A source of the current time in seconds since the Unix epoch.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Seconds since the Unix epoch.
    fn now(&self) -> i64;
}

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
    fn now(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
    }

    /// On `wasm32-unknown-unknown` the standard library has no clock
    /// (`SystemTime::now` panics there): the host's, JavaScript's
    /// `Date.now()` (ECMA-262 section 21.4.3.1), in milliseconds since the
    /// epoch.
    #[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
    fn now(&self) -> i64 {
        let ms = js_sys::Date::now();
        if ms.is_finite() && ms >= 0.0 {
            // Whole seconds; a time value is at most 8.64e15 ms
            // (ECMA-262 section 21.4.1.1), far inside i64.
            (ms / 1000.0).floor() as i64
        } else {
            0
        }
    }
}

/// A fixed instant.
#[derive(Clone, Copy, Debug)]
pub struct FixedClock(
    /// The instant, in seconds since the Unix epoch.
    pub i64,
);

impl Clock for FixedClock {
    fn now(&self) -> i64 {
        self.0
    }
}
