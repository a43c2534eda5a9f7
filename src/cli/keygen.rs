//! `agentsig keygen`

use super::{parse_alg, write_new_file, CliError, CliResult};
use agentsig::{Algorithm, SigningKey};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct KeygenArgs {
    /// Algorithm the key is bound to (RFC 9421 or JOSE name).
    #[arg(long, default_value = "ecdsa-p256-sha256", value_parser = parse_alg, value_name = "ALG")]
    alg: Algorithm,
    /// Output path prefix: writes PREFIX.pem (private, PKCS#8 v1, mode 0600), PREFIX.pub.pem,
    /// PREFIX.jwk.json and PREFIX.jwks.json. Existing files are never overwritten.
    #[arg(
        long,
        default_value = "agentsig-key",
        allow_hyphen_values = true,
        value_name = "PREFIX"
    )]
    out: PathBuf,
    /// Key id to publish; default: the RFC 7638 thumbprint (which may begin with '-').
    #[arg(long, allow_hyphen_values = true, value_name = "KID")]
    kid: Option<String>,
    /// Print one JSON report (agentsig.report/1, docs/report.md) instead of text: the files
    /// written, kid, thumbprint and DIDs in its details.
    #[arg(long)]
    json: bool,
    /// Encrypt PREFIX.pem (PKCS#8 "ENCRYPTED PRIVATE KEY": PBES2, PBKDF2-HMAC-SHA256, AES-256-CBC)
    /// with the passphrase in this file or environment variable; never on the command line.
    #[command(flatten)]
    passphrase: super::PassphraseArgs,
    /// Generate the key pair inside the PKCS#11 token this RFC 7512 URI names (its `object=` is
    /// the new key's label): the private key is sensitive and not extractable and never leaves
    /// the token; writes PREFIX.pub.pem, PREFIX.jwk.json and PREFIX.jwks.json only. The PIN comes
    /// from pin-source=file:... in the URI or AGENTSIG_PKCS11_PIN (docs/keys.md).
    #[arg(long, value_name = "URI")]
    pkcs11: Option<String>,
}

impl KeygenArgs {
    /// The output prefix, for the report's `subject`.
    pub fn subject(&self) -> Option<String> {
        Some(self.out.display().to_string())
    }
}

fn with_suffix(prefix: &std::path::Path, suffix: &str) -> PathBuf {
    let mut s = prefix.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

pub fn run(a: KeygenArgs) -> CliResult {
    let prefix = match a.out.to_str() {
        Some(s) if s.ends_with(".pem") => PathBuf::from(&s[..s.len() - 4]),
        _ => a.out.clone(),
    };
    let key = match &a.pkcs11 {
        Some(uri) => super::pkcs11::keygen(
            uri,
            a.alg,
            &[".pub.pem", ".jwk.json", ".jwks.json"].map(|s| with_suffix(&prefix, s)),
        )?,
        None => SigningKey::generate(a.alg)?,
    };
    let kid = a
        .kid
        .clone()
        .unwrap_or_else(|| key.verifying_key().thumbprint());
    let key = key.with_kid(kid.clone());
    let public = key.verifying_key();
    let mut written = Vec::new();

    if a.alg == Algorithm::HmacSha256 {
        if a.passphrase.read_explicit()?.is_some() {
            return Err(CliError::usage(
                "--passphrase-file/--passphrase-env encrypt a PKCS#8 private key; an hmac-sha256 secret has no PKCS#8 form (protect PREFIX.secret by its file mode, 0600)",
            ));
        }
        let secret = key
            .hmac_secret_bytes()
            .ok_or_else(|| CliError::usage("internal: HMAC key without secret"))?;
        let path = with_suffix(&prefix, ".secret");
        let text = zeroize::Zeroizing::new(format!(
            "{}\n",
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, secret)
        ));
        write_new_file(&path, text.as_bytes(), 0o600)?;
        written.push(path);
    } else {
        // A token key has no PKCS#8 form: only its public files are written.
        let pem = match (a.pkcs11.is_some(), a.passphrase.read_explicit()?) {
            (true, Some(_)) => {
                return Err(CliError::usage(
                    "--passphrase-file/--passphrase-env do not apply to a key generated in a PKCS#11 token: its private key never leaves the token",
                ))
            }
            (true, None) => None,
            (false, Some(pass)) => Some(
                key.pkcs8_encrypted_pem(&pass)
                    .map_err(|e| CliError::usage(format!("the passphrase: {e}")))?,
            ),
            (false, None) => Some(
                key.pkcs8_pem()
                    .ok_or_else(|| CliError::usage("internal: generated key has no PKCS#8 form"))?,
            ),
        };
        let priv_path = with_suffix(&prefix, ".pem");
        // rsa-pss-sha512 keys carry id-RSASSA-PSS in PREFIX.pem and
        // PREFIX.pub.pem; an rsa-v1_5-sha256 key's algorithm is recorded in
        // PREFIX.jwk.json's `alg`, which `--key PREFIX.pem` consults.
        let pub_pem = public
            .to_spki_pem_bound()
            .ok_or_else(|| CliError::usage("internal: no SPKI form"))?;
        let jwk =
            serde_json::to_string_pretty(&public.to_jwk().to_value()).unwrap_or_default() + "\n";
        let jwks = serde_json::to_string_pretty(&agentsig::jwk::jwks_document(&[public]))
            .unwrap_or_default()
            + "\n";
        // Refuse before writing anything if any target exists.
        let targets = [
            pem.map(|pem| (priv_path.clone(), pem.as_bytes().to_vec(), 0o600)),
            Some((
                with_suffix(&prefix, ".pub.pem"),
                pub_pem.into_bytes(),
                0o644,
            )),
            Some((with_suffix(&prefix, ".jwk.json"), jwk.into_bytes(), 0o644)),
            Some((with_suffix(&prefix, ".jwks.json"), jwks.into_bytes(), 0o644)),
        ];
        let targets: Vec<_> = targets.into_iter().flatten().collect();
        for (p, _, _) in &targets {
            if p.exists() {
                return Err(CliError::unwritable(format!(
                    "{}: already exists; refusing to overwrite",
                    p.display()
                )));
            }
        }
        for (p, bytes, mode) in &targets {
            write_new_file(p, bytes, *mode)?;
            written.push(p.clone());
        }
    }

    let did_key = agentsig::did::did_key(public);
    let did_jwk = agentsig::did::did_jwk(public);
    if a.json {
        let mut r = agentsig::report::Report::done("keygen", Some(&a.out.display().to_string()));
        r.detail("algorithm", a.alg.httpsig_name());
        r.detail("jose_alg", a.alg.jose_name());
        r.detail("kid", &kid);
        r.detail("thumbprint", public.thumbprint());
        r.detail(
            "files",
            written
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>(),
        );
        r.detail("did_key", did_key);
        r.detail("did_jwk", did_jwk);
        super::print_report(&r);
    } else {
        outln!(
            "algorithm  {} ({})",
            a.alg.httpsig_name(),
            a.alg.jose_name()
        );
        outln!("kid        {kid}");
        for p in &written {
            outln!("wrote      {}", p.display());
        }
        if let Some(d) = did_key {
            outln!("did:key    {d}");
        }
        if let Some(d) = did_jwk {
            outln!("did:jwk    {d}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
