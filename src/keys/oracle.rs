//! An answer oracle for the signature primitive (feature `verify-oracle`),
//! for runtimes whose own signature verification is faster than this
//! crate's compiled code: WebAssembly in a JavaScript runtime, whose
//! WebCrypto (W3C Web Cryptography API, `SubtleCrypto.verify`) runs native
//! Ed25519 and ECDSA.
//!
//! Every verdict rule stays here; only the primitive's answer comes from
//! outside. A verification runs inside [`Oracle::run`]: each
//! `(algorithm, public key, message, signature)` the primitive is asked
//! about is looked up among the answers given so far, matched on every byte.
//! In a probing pass an unanswered check is recorded ([`Oracle::pending`])
//! and assumed to verify: the pass's result stands only if the caller's
//! primitive then verifies every recorded check (the pass then ran on true
//! answers: a valid signature costs one pass), and is thrown away
//! otherwise; replay stores are not consulted in a probing pass
//! ([`defer_replay`]) so that a pass on assumptions records no nonce. In a
//! final pass an unanswered check is computed here as without an oracle.
//! The caller answers the recorded checks ([`Oracle::answer`]) and, unless
//! all verified, runs again. Answers live only as long as the one
//! [`Oracle`]: never across verifications.
//!
//! What the crate checks before asking (so that the outside primitive need
//! only compute the equation): the signature's length, and for Ed25519 a
//! canonical `S` (RFC 8032 section 5.1.7), an `R` not of small order and a
//! canonically encoded public key.

use crate::alg::Algorithm;
use std::cell::RefCell;

/// The most checks one verification may leave pending; beyond it the
/// primitive runs here.
const MAX_PENDING: usize = 256;

/// One signature check the primitive was asked to make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// The key's one algorithm: ES256, ES384 or EdDSA.
    pub alg: Algorithm,
    /// The public key: the uncompressed SEC1 point (ECDSA) or the 32
    /// encoded bytes (Ed25519, RFC 8032 section 5.1.5).
    pub key: Vec<u8>,
    /// The signed message.
    pub msg: Vec<u8>,
    /// The signature: `r || s` (ECDSA, RFC 7518 section 3.4) or RFC 8032's 64 bytes.
    pub sig: Vec<u8>,
}

/// The answers given for one verification, and the checks still unanswered.
#[derive(Debug, Default)]
pub struct Oracle {
    algs: Vec<Algorithm>,
    /// `None`: the caller could not answer; the primitive runs here.
    known: Vec<(Query, Option<bool>)>,
    pending: Vec<Query>,
    probing: bool,
    deferred_replay: bool,
}

thread_local! {
    static CURRENT: RefCell<Option<Oracle>> = const { RefCell::new(None) };
}

impl Oracle {
    /// An oracle that answers for `algs` (others always run here).
    pub fn new(algs: Vec<Algorithm>) -> Oracle {
        Oracle {
            algs: algs
                .into_iter()
                .filter(|a| {
                    matches!(
                        a,
                        Algorithm::EcdsaP256Sha256
                            | Algorithm::EcdsaP384Sha384
                            | Algorithm::Ed25519
                    )
                })
                .collect(),
            ..Oracle::default()
        }
    }

    /// Run `f` with this oracle answering the primitive: a probing pass
    /// (`probe`) records what it cannot answer, a final pass computes it.
    pub fn run<R>(&mut self, probe: bool, f: impl FnOnce() -> R) -> R {
        self.probing = probe;
        self.deferred_replay = false;
        let me = std::mem::take(self);
        CURRENT.with(|c| *c.borrow_mut() = Some(me));
        let r = f();
        *self = CURRENT.with(|c| c.borrow_mut().take()).unwrap_or_default();
        r
    }

    /// The checks the last probing pass could not answer, in order.
    pub fn pending(&self) -> &[Query] {
        &self.pending
    }

    /// Whether the last probing pass passed over a replay store (its result
    /// is then never the final one).
    pub fn deferred_replay(&self) -> bool {
        self.deferred_replay
    }

    /// Answer the pending checks, in [`Oracle::pending`]'s order: `Some(true)`
    /// verified, `Some(false)` not, `None` not known (the primitive then
    /// runs here). Pending checks without an answer are dropped.
    pub fn answer(&mut self, answers: impl IntoIterator<Item = Option<bool>>) {
        let pending = std::mem::take(&mut self.pending);
        self.known.extend(pending.into_iter().zip(answers));
    }
}

/// Forget an oracle a pass left installed (a pass that did not return).
pub fn clear() {
    CURRENT.with(|c| {
        if let Ok(mut g) = c.try_borrow_mut() {
            *g = None;
        }
    });
}

/// The oracle's answer for this check: `None` when there is no oracle, it
/// does not answer for `alg`, or (in a final pass) has no answer: then the
/// primitive runs here.
pub(crate) fn ask(alg: Algorithm, key: &[u8], msg: &[u8], sig: &[u8]) -> Option<bool> {
    CURRENT.with(|c| {
        let mut g = c.try_borrow_mut().ok()?;
        let o = g.as_mut()?;
        if !o.algs.contains(&alg) {
            return None;
        }
        let same = |q: &Query| q.alg == alg && q.key == key && q.msg == msg && q.sig == sig;
        if let Some((_, a)) = o.known.iter().find(|(q, _)| same(q)) {
            return *a;
        }
        if !o.probing || o.pending.len() >= MAX_PENDING {
            return None;
        }
        if !o.pending.iter().any(same) {
            o.pending.push(Query {
                alg,
                key: key.to_vec(),
                msg: msg.to_vec(),
                sig: sig.to_vec(),
            });
        }
        // Assumed; the pass stands only if the caller confirms it.
        Some(true)
    })
}

/// True in a probing pass: the replay store is then left alone (the pass
/// is never the final one; the final pass consults it).
pub(crate) fn defer_replay() -> bool {
    CURRENT.with(|c| {
        let Ok(mut g) = c.try_borrow_mut() else {
            return false;
        };
        match g.as_mut() {
            Some(o) if o.probing => {
                o.deferred_replay = true;
                true
            }
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::SigningKey;

    #[test]
    fn answers_only_the_exact_bytes_and_records_the_rest() {
        for alg in [Algorithm::EcdsaP256Sha256, Algorithm::Ed25519] {
            let k = SigningKey::generate(alg).unwrap();
            let vk = k.verifying_key();
            let sig = k.sign(b"m").unwrap();
            let mut o = Oracle::new(vec![alg]);
            // Probing: not answered, so assumed and recorded.
            assert!(o.run(true, || vk.verify(b"m", &sig)).is_ok());
            assert_eq!(o.pending().len(), 1);
            assert_eq!(o.pending()[0].msg, b"m");
            // A false answer is obeyed (the caller's primitive said no)...
            o.answer([Some(false)]);
            assert!(o.run(true, || vk.verify(b"m", &sig)).is_err());
            assert!(o.pending().is_empty());
            // ...but never for other bytes: another message is asked anew.
            assert!(o.run(true, || vk.verify(b"n", &sig)).is_ok());
            assert_eq!(o.pending().len(), 1);
            // A final pass computes what it was not told.
            assert!(o.run(false, || vk.verify(b"n", &sig)).is_err());
            let mut o = Oracle::new(vec![alg]);
            assert!(o.run(false, || vk.verify(b"m", &sig)).is_ok());
            o.run(true, || vk.verify(b"m", &sig)).ok();
            o.answer([None]);
            assert!(o.run(true, || vk.verify(b"m", &sig)).is_ok());
            // Outside a run, nothing is asked.
            assert!(vk.verify(b"m", &sig).is_ok());
        }
    }

    #[test]
    fn ed25519_rules_are_checked_before_asking() {
        let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
        let vk = k.verifying_key();
        let mut sig = k.sign(b"m").unwrap();
        // S + L: the same point equation, refused as non-canonical (RFC
        // 8032 section 5.1.7) without asking.
        let mut carry = 0u16;
        for (i, l) in super::super::types::ED25519_L.iter().enumerate() {
            let v = u16::from(sig[32 + i]) + u16::from(*l) + carry;
            sig[32 + i] = v as u8;
            carry = v >> 8;
        }
        let mut o = Oracle::new(vec![Algorithm::Ed25519]);
        assert!(o.run(true, || vk.verify(b"m", &sig)).is_err());
        assert!(o.pending().is_empty());
        // A signature of the wrong length is refused before asking too.
        assert!(o.run(true, || vk.verify(b"m", &sig[..63])).is_err());
        assert!(o.pending().is_empty());
    }

    #[test]
    fn only_a_probing_pass_defers_the_replay_store() {
        assert!(!defer_replay());
        let mut o = Oracle::new(vec![]);
        assert!(o.run(true, defer_replay));
        assert!(o.deferred_replay());
        assert!(!o.run(false, defer_replay));
        assert!(!o.deferred_replay());
    }
}
