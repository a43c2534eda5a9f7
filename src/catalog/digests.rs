//! Declared digests filled from the publisher's own files before the
//! manifests are signed (`agentsig sign CATALOG --digest-from DIR`), so that
//! the Trust Manifest signature covers them.
//!
//! A Trust Manifest declares digests in two places (AI Catalog "Attestation
//! Object", "Provenance Link Object"), each `algorithm:lowercase-hex`
//! ("Digest Format"; agentsig writes `sha256`, "Producers SHOULD use SHA-256
//! or stronger"):
//!
//! * an attestation's `digest` (and `size`, its length in bytes) of the
//!   document at its `uri`: a `data:` URI (RFC 2397) is digested from its
//!   own content; an `http(s)` URI from the local file it maps to;
//! * a provenance link's `sourceDigest` when its `sourceId` is the entry's
//!   own `url`: the digest of the artifact the entry references (the catalog
//!   text has no entry-level digest; a provenance link naming the artifact is
//!   where a manifest binds its bytes, [`super::Binding`]); the link is made,
//!   with the relation [`super::manifest::BINDING_RELATION`], when the
//!   manifest has none and the URL maps to a file. Links naming anything
//!   else (a source repository) are left as they are.
//!
//! URLs map to files by [`LocalFiles`]: `DIR` maps every URL's path under
//! DIR; `PREFIX=DIR` maps only URLs beginning with PREFIX, the rest of the
//! URL under DIR. A URL that a mapping matches but whose file is missing is
//! an error naming both; a URL no mapping matches is left alone. This is the
//! one part of [`crate::catalog`] that reads files: the publisher's own,
//! named by the operator.

use super::manifest::{
    chosen_entries, data_uri_content, percent_decode, set_source_digest, sha256_digest,
    sha256_format, SignCatalogError,
};
use super::SignTarget;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// How URLs map to local files: a list of `(prefix, directory)`, the first
/// match wins.
#[derive(Clone, Debug, Default)]
pub struct LocalFiles {
    maps: Vec<(Option<String>, PathBuf)>,
}

/// One digest written into the catalog.
#[derive(Clone, Debug, serde::Serialize)]
#[non_exhaustive]
pub struct Filled {
    /// RFC 6901 pointer of the member written (`.../digest` or
    /// `.../sourceDigest`).
    pub pointer: String,
    /// The URL referenced.
    pub url: String,
    /// The local file read (`None` for a `data:` URI).
    pub file: Option<PathBuf>,
    /// The digest written (`sha256:...`).
    pub digest: String,
    /// The length in bytes (written as `size` for an attestation).
    pub size: u64,
}

impl LocalFiles {
    /// No mapping.
    pub fn new() -> LocalFiles {
        LocalFiles::default()
    }

    /// Add a mapping: `DIR` (every URL's path under DIR) or `PREFIX=DIR`
    /// with PREFIX an `http://` or `https://` URL prefix (the rest of the URL
    /// under DIR).
    pub fn add(&mut self, spec: &str) {
        match spec.split_once('=') {
            Some((prefix, dir))
                if prefix.starts_with("https://") || prefix.starts_with("http://") =>
            {
                self.maps
                    .push((Some(prefix.to_owned()), PathBuf::from(dir)));
            }
            _ => self.maps.push((None, PathBuf::from(spec))),
        }
    }

    /// The file `url` maps to: `None` when no mapping matches it (or it is
    /// not an `http(s)` URL), else the path or why the URL names no file.
    pub fn path_for(&self, url: &str) -> Option<Result<PathBuf, String>> {
        self.mapped(url).map(|r| r.map(|(_, path)| path))
    }

    /// The directory of the mapping that matches `url` and the file below
    /// it ([`LocalFiles::path_for`]).
    fn mapped(&self, url: &str) -> Option<Result<(&Path, PathBuf), String>> {
        let rest = url
            .strip_prefix("https://")
            .or_else(|| url.strip_prefix("http://"))?;
        let path = rest.find('/').map_or("", |i| &rest[i..]);
        for (prefix, dir) in &self.maps {
            let rel = match prefix {
                Some(p) => match url.strip_prefix(p.as_str()) {
                    Some(r) => r,
                    None => continue,
                },
                None => path,
            };
            return Some(under(dir, rel).map(|p| (dir.as_path(), p)));
        }
        None
    }
}

/// `rel` (a URL path, percent-encoded, maybe with a query or fragment)
/// below `dir`: each segment decoded (RFC 3986 section 2.1), `.` and `..`
/// refused (the file must be under `dir`), a path ending in `/` refused.
fn under(dir: &Path, rel: &str) -> Result<PathBuf, String> {
    let rel = rel.split(['?', '#']).next().unwrap_or("");
    if rel.is_empty() || rel.ends_with('/') {
        return Err("the URL names a directory, not a file".into());
    }
    let mut out = dir.to_path_buf();
    for seg in rel.split('/').filter(|s| !s.is_empty()) {
        let bytes = percent_decode(seg)?;
        let seg = String::from_utf8(bytes).map_err(|_| "a path segment is not UTF-8")?;
        if seg == "." || seg == ".." || seg.contains(['/', '\\', '\0']) {
            return Err(format!(
                "the path segment {} would leave the directory",
                crate::text::quoted(&seg)
            ));
        }
        out.push(seg);
    }
    Ok(out)
}

/// SHA-256 and length of the regular file at `path`, read in chunks; the
/// file must lie inside `dir` once every symbolic link is resolved (a link
/// inside the publisher's directory may name another file there, never one
/// outside it, such as a key or a system file). The file opened is the
/// resolved path, checked to be the same file after opening, so a link
/// swapped in between is not followed out either.
fn digest_file(dir: &Path, path: &Path) -> Result<(String, u64), String> {
    use std::io::Read;
    let root =
        std::fs::canonicalize(dir).map_err(|e| format!("the directory {}: {e}", dir.display()))?;
    let real = std::fs::canonicalize(path).map_err(|e| e.to_string())?;
    if !real.starts_with(&root) {
        return Err(format!(
            "a symbolic link leads out of the directory {} (to {}): not read",
            dir.display(),
            real.display()
        ));
    }
    let meta = std::fs::symlink_metadata(&real).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let mut f = std::fs::File::open(&real).map_err(|e| e.to_string())?;
    let opened = f.metadata().map_err(|e| e.to_string())?;
    if !same_file(&meta, &opened) {
        return Err("the file changed while it was opened: not read".into());
    }
    let mut cx = ring::digest::Context::new(&ring::digest::SHA256);
    let mut buf = vec![0u8; 64 * 1024];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        cx.update(&buf[..n]);
        size += n as u64;
    }
    Ok((sha256_format(cx.finish().as_ref()), size))
}

/// Are two metadata of the same file (device and inode on Unix; length
/// and kind elsewhere)?
#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino() && b.is_file()
}

#[cfg(not(unix))]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.len() == b.len() && b.is_file()
}

/// Fill the declared digests of the manifests `target` names (see the
/// module documentation); returns what was written. `doc` is changed only
/// when every referenced file was read.
///
/// # Errors
/// [`SignCatalogError::DigestFile`] naming a referenced file that cannot be
/// read, [`SignCatalogError::DigestUrl`] for a URL that names no file under
/// its directory, and the entry-choice errors of
/// [`super::sign_catalog`].
pub fn fill_digests(
    doc: &mut Value,
    target: &SignTarget,
    files: &LocalFiles,
) -> Result<Vec<Filled>, SignCatalogError> {
    let mut work = doc.clone();
    let mut filled = Vec::new();
    if *target == SignTarget::Host {
        if let Some(m) = work
            .get_mut("host")
            .and_then(|h| h.get_mut("trustManifest"))
        {
            fill_manifest(m, "/host/trustManifest", None, files, &mut filled)?;
        }
    } else {
        let entries = work
            .get_mut("entries")
            .and_then(Value::as_array_mut)
            .ok_or(SignCatalogError::NotACatalog)?;
        for i in chosen_entries(entries, target)? {
            let Some(entry) = entries.get_mut(i) else {
                continue;
            };
            let url = entry.get("url").and_then(Value::as_str).map(str::to_owned);
            if let Some(m) = entry.get_mut("trustManifest") {
                let base = format!("/entries/{i}/trustManifest");
                fill_manifest(m, &base, url.as_deref(), files, &mut filled)?;
            }
        }
    }
    *doc = work;
    Ok(filled)
}

/// The digest and size of the document at `url`: a `data:` URI's content,
/// or the mapped file; `None` when nothing maps it.
fn referenced(
    url: &str,
    pointer: &str,
    files: &LocalFiles,
) -> Result<Option<(String, u64, Option<PathBuf>)>, SignCatalogError> {
    if let Some(content) = data_uri_content(url) {
        let bytes = content.map_err(|why| SignCatalogError::DigestUrl {
            pointer: pointer.to_owned(),
            url: url.to_owned(),
            why,
        })?;
        return Ok(Some((sha256_digest(&bytes), bytes.len() as u64, None)));
    }
    let Some(mapped) = files.mapped(url) else {
        return Ok(None);
    };
    let (dir, path) = mapped.map_err(|why| SignCatalogError::DigestUrl {
        pointer: pointer.to_owned(),
        url: url.to_owned(),
        why,
    })?;
    let (digest, size) = digest_file(dir, &path).map_err(|why| SignCatalogError::DigestFile {
        pointer: pointer.to_owned(),
        url: url.to_owned(),
        path: path.clone(),
        why,
    })?;
    Ok(Some((digest, size, Some(path))))
}

fn fill_manifest(
    m: &mut Value,
    base: &str,
    entry_url: Option<&str>,
    files: &LocalFiles,
    filled: &mut Vec<Filled>,
) -> Result<(), SignCatalogError> {
    if let Some(list) = m.get_mut("attestations").and_then(Value::as_array_mut) {
        for (i, a) in list.iter_mut().enumerate() {
            let Some(uri) = a.get("uri").and_then(Value::as_str).map(str::to_owned) else {
                continue;
            };
            let pointer = format!("{base}/attestations/{i}");
            let Some((digest, size, file)) = referenced(&uri, &format!("{pointer}/uri"), files)?
            else {
                continue;
            };
            if let Some(o) = a.as_object_mut() {
                o.insert("digest".into(), Value::String(digest.clone()));
                o.insert("size".into(), Value::from(size));
            }
            filled.push(Filled {
                pointer: format!("{pointer}/digest"),
                url: uri,
                file,
                digest,
                size,
            });
        }
    }
    let Some(entry_url) = entry_url else {
        return Ok(());
    };
    // The entry's own `url` is bound by a provenance link naming it: made
    // when the manifest has none and the URL maps to a file.
    let named = m
        .get("provenance")
        .and_then(Value::as_array)
        .is_some_and(|l| {
            l.iter()
                .any(|p| p.get("sourceId").and_then(Value::as_str) == Some(entry_url))
        });
    if !named {
        let pointer = format!("{base}/provenance/-");
        if let Some((digest, size, file)) = referenced(entry_url, &pointer, files)? {
            set_source_digest(m, entry_url, digest.clone())?;
            let n = m
                .get("provenance")
                .and_then(Value::as_array)
                .map_or(1, Vec::len);
            filled.push(Filled {
                pointer: format!("{base}/provenance/{}/sourceDigest", n - 1),
                url: entry_url.to_owned(),
                file,
                digest,
                size,
            });
        }
        return Ok(());
    }
    if let Some(list) = m.get_mut("provenance").and_then(Value::as_array_mut) {
        for (i, p) in list.iter_mut().enumerate() {
            if p.get("sourceId").and_then(Value::as_str) != Some(entry_url) {
                continue;
            }
            let pointer = format!("{base}/provenance/{i}");
            let Some((digest, size, file)) =
                referenced(entry_url, &format!("{pointer}/sourceId"), files)?
            else {
                continue;
            };
            if let Some(o) = p.as_object_mut() {
                o.insert("sourceDigest".into(), Value::String(digest.clone()));
            }
            filled.push(Filled {
                pointer: format!("{pointer}/sourceDigest"),
                url: entry_url.to_owned(),
                file,
                digest,
                size,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_map_under_the_directory_and_traversal_is_refused() {
        let mut f = LocalFiles::new();
        f.add("https://cdn.example/=cdn");
        f.add("site");
        assert_eq!(
            f.path_for("https://cdn.example/a/b%20c.json?x#y"),
            Some(Ok(PathBuf::from("cdn/a/b c.json")))
        );
        assert_eq!(
            f.path_for("https://example.com/x/y.pdf"),
            Some(Ok(PathBuf::from("site/x/y.pdf")))
        );
        assert!(f.path_for("urn:x").is_none());
        assert!(matches!(
            f.path_for("https://e.com/a/%2e%2e/b"),
            Some(Err(_))
        ));
        assert!(matches!(f.path_for("https://e.com/a/../b"), Some(Err(_))));
        assert!(matches!(f.path_for("https://e.com/a/"), Some(Err(_))));
        assert!(matches!(f.path_for("https://e.com"), Some(Err(_))));
        let mut only = LocalFiles::new();
        only.add("https://cdn.example/=cdn");
        assert!(only.path_for("https://other.example/a").is_none());
    }
}
