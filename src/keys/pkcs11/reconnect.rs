//! A reconnect to a token, bounded in time. A token or its library can
//! hang inside a call (a network HSM whose link is gone, a stuck USB
//! device) and nothing in PKCS#11 bounds a call's duration (PKCS#11 v2.40
//! section 5 gives no timeout). So the reconnect (`C_Initialize`, open a
//! session, `C_Login`, find the key) runs on its own thread and the
//! signers wait for it at most [`RECONNECT_TIMEOUT`]: past that they fail
//! closed with [`Pkcs11Error::TimedOut`] and nothing is signed. The thread
//! may stay stuck in the module; while it is, no second attempt is started
//! (it would hang too, and pile up threads) and every later signer fails at
//! once. When the stuck attempt returns, the next signer starts afresh.

use super::Pkcs11Error;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// How long signers wait for a reconnect to the token before they fail
/// with [`Pkcs11Error::TimedOut`].
pub const RECONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// One attempt's outcome, shared by its thread and the signers waiting.
#[derive(Default)]
struct Attempt {
    done: Mutex<Option<Result<(), Pkcs11Error>>>,
    cv: Condvar,
}

/// The attempt in flight, if any, and whether it has outlived the timeout.
#[derive(Default)]
struct Current {
    attempt: Option<Arc<Attempt>>,
    stuck: bool,
}

/// Runs reconnects one at a time, each on a helper thread, and bounds the
/// wait for one.
pub(crate) struct Reconnect {
    timeout: Duration,
    current: Arc<Mutex<Current>>,
    started: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded values stay consistent across a panic (set whole).
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Reconnect {
    pub(crate) fn new(timeout: Duration) -> Self {
        Reconnect {
            timeout,
            current: Default::default(),
            started: AtomicU64::new(0),
        }
    }

    /// Reconnect attempts started so far.
    pub(crate) fn attempts(&self) -> u64 {
        self.started.load(Ordering::Relaxed)
    }

    /// Run `job` (the reconnect) on a helper thread, or join the attempt
    /// already in flight, and wait for it at most the timeout.
    ///
    /// # Errors
    /// `job`'s error; [`Pkcs11Error::TimedOut`] when the attempt has not
    /// returned within the timeout, at once when an earlier attempt is
    /// still stuck.
    pub(crate) fn run<F>(&self, job: F) -> Result<(), Pkcs11Error>
    where
        F: FnOnce() -> Result<(), Pkcs11Error> + Send + 'static,
    {
        let attempt = {
            let mut cur = lock(&self.current);
            // An attempt that has returned (its thread not yet cleared
            // it) is over: this caller starts a new one.
            if cur
                .attempt
                .as_ref()
                .is_some_and(|a| lock(&a.done).is_some())
            {
                *cur = Current::default();
            }
            match &cur.attempt {
                Some(_) if cur.stuck => {
                    return Err(Pkcs11Error::TimedOut(format!(
                        "a reconnect has not returned after {} ms and is not started again while it hangs",
                        self.timeout.as_millis()
                    )))
                }
                Some(a) => a.clone(),
                None => {
                    let a = Arc::new(Attempt::default());
                    let (mine, current) = (a.clone(), self.current.clone());
                    let spawned = std::thread::Builder::new()
                        .name("agentsig-pkcs11-reconnect".into())
                        .spawn(move || {
                            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job))
                                .unwrap_or_else(|_| {
                                    Err(Pkcs11Error::Device("the reconnect panicked".into()))
                                });
                            *lock(&mine.done) = Some(r);
                            mine.cv.notify_all();
                            let mut cur = lock(&current);
                            if cur.attempt.as_ref().is_some_and(|a| Arc::ptr_eq(a, &mine)) {
                                *cur = Current::default();
                            }
                        });
                    if let Err(e) = spawned {
                        return Err(Pkcs11Error::Unavailable(format!(
                            "cannot start a reconnect thread: {e}"
                        )));
                    }
                    self.started.fetch_add(1, Ordering::Relaxed);
                    cur.attempt = Some(a.clone());
                    a
                }
            }
        };
        let done = lock(&attempt.done);
        let (done, _) = attempt
            .cv
            .wait_timeout_while(done, self.timeout, |d| d.is_none())
            .unwrap_or_else(|p| p.into_inner());
        if let Some(r) = done.as_ref() {
            return r.clone();
        }
        drop(done);
        let mut cur = lock(&self.current);
        if cur
            .attempt
            .as_ref()
            .is_some_and(|a| Arc::ptr_eq(a, &attempt))
        {
            cur.stuck = true;
        }
        Err(Pkcs11Error::TimedOut(format!(
            "the token did not answer a reconnect within {} ms",
            self.timeout.as_millis()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::mpsc;

    /// A signer facing a hung reconnect fails closed after the timeout; a
    /// second one meanwhile fails at once without starting another attempt;
    /// once the attempt returns, signing works again. Counted, not timed.
    #[test]
    fn a_hung_reconnect_fails_closed_and_is_not_started_twice() {
        let gate = Arc::new(Reconnect::new(Duration::from_millis(100)));
        let connected = Arc::new(AtomicBool::new(false));
        let (release, blocked) = mpsc::channel::<()>();
        let blocked = Arc::new(Mutex::new(blocked));
        let (ended, finished) = mpsc::channel::<()>();
        let finished = Mutex::new(finished);
        // What a signer does: sign when connected, else reconnect first.
        let sign = |gate: &Reconnect| -> Result<&'static str, Pkcs11Error> {
            if !connected.load(Ordering::SeqCst) {
                let (c, b, e) = (connected.clone(), blocked.clone(), ended.clone());
                gate.run(move || {
                    // The module hangs until the test lets it return.
                    lock(&b).recv().ok();
                    c.store(true, Ordering::SeqCst);
                    e.send(()).ok();
                    Ok(())
                })?;
            }
            Ok("signature")
        };
        // (a) The first signer waits for the timeout and gets the typed error.
        assert!(matches!(sign(&gate), Err(Pkcs11Error::TimedOut(m)) if m.contains("100 ms")));
        assert_eq!(gate.attempts(), 1);
        // (b) Another signer, from another thread, fails without a second attempt.
        let g = gate.clone();
        let other = std::thread::spawn(move || g.run(|| Ok(())));
        assert!(matches!(
            other.join().unwrap(),
            Err(Pkcs11Error::TimedOut(m)) if m.contains("not started again")
        ));
        assert!(matches!(sign(&gate), Err(Pkcs11Error::TimedOut(_))));
        assert_eq!(gate.attempts(), 1);
        // (c) The module returns: once the attempt has ended, signing works
        // again, with no second attempt.
        release.send(()).unwrap();
        lock(&finished).recv().unwrap();
        let signed = sign(&gate).unwrap();
        assert_eq!(signed, "signature");
        assert!(connected.load(Ordering::SeqCst));
        assert_eq!(gate.attempts(), 1);
        // A failed reconnect's error reaches the signer, and the next
        // signer starts a new attempt (a long timeout: these return).
        let gate = Reconnect::new(Duration::from_secs(600));
        let e = gate.run(|| Err(Pkcs11Error::WrongPin)).unwrap_err();
        assert_eq!(e, Pkcs11Error::WrongPin);
        assert_eq!(gate.run(|| Ok(())), Ok(()));
        assert_eq!(gate.attempts(), 2);
    }
}
