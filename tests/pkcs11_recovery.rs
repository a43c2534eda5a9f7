//! A token key survives its token going away and coming back, and fails
//! closed meanwhile (src/keys/pkcs11): on a real SoftHSM2 token, another
//! client in the same process logs the application out, finalizes the
//! library (what a restarted HSM client does to every session), takes the
//! token's store away and brings it back, and changes the PIN so a
//! reconnect cannot log in. One test in its own binary: these
//! events reach every session of the process. The Web Bot Auth key
//! directory `serve` publishes fails closed too: 503 with Retry-After while
//! its token key cannot sign a new proof, never a 500 nor an unsigned
//! directory.

mod pkcs11_support;

use agentsig::keys::pkcs11::{self, Pkcs11Error};
use agentsig::keys::{KeyError, LoadOptions};
use cryptoki::context::{CInitializeArgs, CInitializeFlags, Pkcs11};
use cryptoki::error::{Error as CkError, RvError};
use cryptoki::session::UserType;
use cryptoki::types::AuthPin;
use pkcs11_support::{serve_once, token, LABEL, PIN, SO_PIN};

/// A GET of the key directory for `host` from `d`: its status, whether it
/// carries a proof (a `Signature`), and its `Retry-After`.
fn directory_once(
    d: &agentsig::server::webbotauth::DirectoryPublisher,
    host: &str,
) -> (u16, bool, Option<String>) {
    let req = http::Request::get(agentsig::webbotauth::WELL_KNOWN_PATH)
        .header("host", host)
        .body(())
        .unwrap();
    let r = d.respond(&req);
    (
        r.status().as_u16(),
        r.headers().contains_key("signature"),
        r.headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_owned()),
    )
}

fn other_client(module: &str) -> Pkcs11 {
    let c = Pkcs11::new(module).unwrap();
    // Already initialized by the key's own context: the same library.
    let _ = c.initialize(CInitializeArgs::new(CInitializeFlags::OS_LOCKING_OK));
    c
}

fn slot(c: &Pkcs11) -> cryptoki::slot::Slot {
    c.get_slots_with_token()
        .unwrap()
        .into_iter()
        .find(|s| c.get_token_info(*s).unwrap().label() == LABEL)
        .unwrap()
}

#[test]
fn a_token_that_goes_away_and_comes_back_recovers_and_fails_closed_meanwhile() {
    let Some((t, _token)) = token() else { return };
    let key = pkcs11::load(&t.uri("p256"), &LoadOptions::default()).unwrap();
    let vk = key.verifying_key().clone();
    let tk = key.token_key().unwrap();
    let sign_ok = |m: &[u8]| vk.verify(m, &key.sign(m).unwrap()).unwrap();
    sign_ok(b"before");
    let opened = tk.sessions_opened();
    // The same token key behind the signing layer `serve` uses.
    let served = pkcs11::load(&t.uri("p256"), &LoadOptions::default()).unwrap();
    let layer = agentsig::server::SignLayer::new(std::sync::Arc::new(
        agentsig::server::KeyRing::new(vec![served]).unwrap(),
    ));
    assert_eq!(serve_once(&layer, 1), (200, true));
    // The same token key publishing the Web Bot Auth key directory. Its
    // proofs are kept per authority, so each phase below asks for a host
    // not asked before: the proof is made then, by the token.
    let directory = agentsig::server::webbotauth::DirectoryPublisher::new(
        vec![pkcs11::load(&t.uri("p256"), &LoadOptions::default()).unwrap()],
        agentsig::httpsig::SiteAuthorities::only([
            "before.example",
            "away.example",
            "back.example",
            "pin.example",
        ])
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        directory_once(&directory, "before.example"),
        (200, true, None)
    );

    // 1. Logged out by another session (C_Logout ends the login of every
    // session of the application, PKCS#11 v2.40 section 5.6): the next
    // signature logs in again.
    let c = other_client(&t.module);
    let s = c.open_ro_session(slot(&c)).unwrap();
    s.logout().unwrap();
    drop(s);
    sign_ok(b"after logout");
    let after_logout = tk.sessions_opened();
    assert!(after_logout > opened, "a reconnect opened a new session");

    // 2. The library finalized (every session and the login gone, calls
    // answer CKR_CRYPTOKI_NOT_INITIALIZED): initialized again, reconnected.
    other_client(&t.module).finalize().unwrap();
    sign_ok(b"after finalize");
    assert!(tk.sessions_opened() > after_logout);

    // 3. Away: the token is gone (its store moved away, the library
    // finalized, so a reconnect finds no such token). Every call fails with
    // the cause and returns nothing; served responses are 503, never
    // unsigned.
    let tokens = t.dir.join("tokens");
    let away = t.dir.join("tokens.away");
    other_client(&t.module).finalize().unwrap();
    std::fs::rename(&tokens, &away).unwrap();
    std::fs::create_dir(&tokens).unwrap();
    for n in 0..3 {
        assert!(matches!(
            key.sign(b"while away"),
            Err(KeyError::Pkcs11(Pkcs11Error::TokenNotFound(_)))
        ));
        assert_eq!(serve_once(&layer, 10 + n), (503, false));
        assert_eq!(
            directory_once(&directory, "away.example"),
            (503, false, Some("1".to_owned()))
        );
    }
    // A proof made before the token went away is still served.
    assert_eq!(
        directory_once(&directory, "before.example"),
        (200, true, None)
    );

    // 4. Back (the store restored, the HSM client restarted): the same key
    // objects sign again without being loaded again.
    std::fs::remove_dir(&tokens).unwrap();
    std::fs::rename(&away, &tokens).unwrap();
    other_client(&t.module).finalize().unwrap();
    sign_ok(b"back");
    assert_eq!(serve_once(&layer, 20), (200, true));
    assert_eq!(
        directory_once(&directory, "away.example"),
        (200, true, None)
    );
    assert_eq!(
        directory_once(&directory, "back.example"),
        (200, true, None)
    );

    // 5. The PIN changed while the process ran: the reconnect's login is
    // refused once, and never tried again (each refused login counts toward
    // the token's lockout, CKR_PIN_LOCKED); served responses are 503.
    let c = other_client(&t.module);
    let s = c.open_rw_session(slot(&c)).unwrap();
    match s.login(UserType::User, Some(&AuthPin::from(PIN.to_owned()))) {
        Ok(()) | Err(CkError::Pkcs11(RvError::UserAlreadyLoggedIn, _)) => {}
        Err(e) => panic!("{e}"),
    }
    s.set_pin(
        &AuthPin::from(PIN.to_owned()),
        &AuthPin::from("9999".to_owned()),
    )
    .unwrap();
    drop(s);
    c.finalize().unwrap();
    let logins = tk.login_attempts();
    for n in 0..3 {
        assert!(matches!(
            key.sign(b"pin changed"),
            Err(KeyError::Pkcs11(Pkcs11Error::PinNotRetried(_)))
        ));
        assert_eq!(serve_once(&layer, 30 + n), (503, false));
        assert_eq!(
            directory_once(&directory, "pin.example"),
            (503, false, Some("1".to_owned()))
        );
    }
    assert_eq!(
        tk.login_attempts(),
        logins + 1,
        "one refused login, no more"
    );

    // The security officer restores the PIN: a key loaded afresh signs.
    let c = other_client(&t.module);
    let s = c.open_rw_session(slot(&c)).unwrap();
    s.login(UserType::So, Some(&AuthPin::from(SO_PIN.to_owned())))
        .unwrap();
    s.init_pin(&AuthPin::from(PIN.to_owned())).unwrap();
    s.logout().unwrap();
    drop(s);
    let again = pkcs11::load(&t.uri("p256"), &LoadOptions::default()).unwrap();
    let sig = again.sign(b"reloaded").unwrap();
    vk.verify(b"reloaded", &sig).unwrap();
}
