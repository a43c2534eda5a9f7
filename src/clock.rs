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
    fn now(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
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
