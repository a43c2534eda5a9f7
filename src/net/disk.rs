//! The private on-disk cache directory ([`DiscoveryPolicy::cache_dir`],
//! the CLI's `--cache-dir`): JWK Sets and unknown-`kid` refetch cooldowns
//! kept between processes.
//!
//! # Security contract
//! What is read from this directory decides which keys verify a signature
//! without asking the origin, so it is trusted only when no one else could
//! have written it:
//! * the directory is created with mode 0700 and is refused (not read, not
//!   written) when it is owned by another user or is group- or
//!   world-writable;
//! * an entry is read only when it is a regular file (opened with
//!   `O_NOFOLLOW`: a symlink is ignored) owned by this user and not group-
//!   or world-writable; anything else is ignored, as if absent;
//! * entries are written atomically with mode 0600
//!   (`crate::lockfile::replace`).
//!
//! [`DiscoveryPolicy::cache_dir`]: super::discovery::DiscoveryPolicy::cache_dir

use std::io::Read;
use std::path::Path;

/// Why a cache directory is not used.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CacheDirError {
    /// It could not be created or inspected.
    #[error("cache directory {path}: {message}")]
    Io {
        /// The directory.
        path: String,
        /// What failed.
        message: String,
    },
    /// Someone else could write into it.
    #[error("cache directory {path} is not private: {why} (it must be a directory owned by this user and not group- or world-writable, e.g. mode 0700)")]
    NotPrivate {
        /// The directory.
        path: String,
        /// What is wrong.
        why: String,
    },
}

#[cfg(unix)]
fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Create `dir` (mode 0700, parents too) when it does not exist, then check
/// that it is private: a directory owned by this user, not group- or
/// world-writable.
///
/// # Errors
/// [`CacheDirError`] when the cache directory is not private to this user or cannot be created.
pub fn ensure_private_dir(dir: &Path) -> Result<(), CacheDirError> {
    let path = dir.display().to_string();
    let io = |e: std::io::Error| CacheDirError::Io {
        path: path.clone(),
        message: e.to_string(),
    };
    if std::fs::symlink_metadata(dir).is_err() {
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            b.mode(0o700);
        }
        b.create(dir).map_err(io)?;
    }
    let meta = std::fs::metadata(dir).map_err(io)?;
    if !meta.is_dir() {
        return Err(CacheDirError::NotPrivate {
            path,
            why: "not a directory".into(),
        });
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != euid() {
            return Err(CacheDirError::NotPrivate {
                path,
                why: format!("owned by uid {}, not by this user", meta.uid()),
            });
        }
        if meta.mode() & 0o022 != 0 {
            return Err(CacheDirError::NotPrivate {
                path,
                why: format!(
                    "mode {:o} is group- or world-writable",
                    meta.mode() & 0o7777
                ),
            });
        }
    }
    Ok(())
}

/// The bytes of the entry `path` when it may be trusted (see the module
/// documentation) and is at most `max` bytes; `None` otherwise.
pub(crate) fn read_private(path: &Path, max: u64) -> Option<Vec<u8>> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A symlink is not followed; a FIFO does not block the open.
        use rustix::fs::OFlags;
        o.custom_flags((OFlags::NOFOLLOW | OFlags::NONBLOCK).bits() as i32);
    }
    let f = o.open(path).ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.len() > max {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != euid() || meta.mode() & 0o022 != 0 {
            return None;
        }
    }
    let mut buf = Vec::new();
    f.take(max + 1).read_to_end(&mut buf).ok()?;
    (buf.len() as u64 <= max).then_some(buf)
}

/// Write the entry `path` (mode 0600, atomic) when its directory is
/// private; best effort.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) {
    let Some(dir) = path.parent() else { return };
    if ensure_private_dir(dir).is_ok() {
        let _ = crate::lockfile::replace(path, bytes);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("agentsig-disk-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn created_private_and_refused_when_writable_by_others() {
        let d = tmp("mode");
        ensure_private_dir(&d).unwrap();
        let mode = std::fs::metadata(&d).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        for bad in [0o777, 0o770, 0o702] {
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(bad)).unwrap();
            assert!(matches!(
                ensure_private_dir(&d),
                Err(CacheDirError::NotPrivate { .. })
            ));
        }
        // Readable by others is not a write risk.
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        ensure_private_dir(&d).unwrap();
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn entries_written_0600_and_untrusted_ones_ignored() {
        let d = tmp("files");
        ensure_private_dir(&d).unwrap();
        let p = d.join("e.json");
        write_private(&p, b"ok");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(read_private(&p, 100).as_deref(), Some(&b"ok"[..]));
        assert_eq!(read_private(&p, 1), None, "size bound");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(read_private(&p, 100), None, "world-writable entry");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o620)).unwrap();
        assert_eq!(read_private(&p, 100), None, "group-writable entry");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = d.join("link.json");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        assert_eq!(read_private(&link, 100), None, "symlink");
        let sub = d.join("dir.json");
        std::fs::create_dir(&sub).unwrap();
        assert_eq!(read_private(&sub, 100), None, "directory");
        // A directory that others may write is never written into.
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        write_private(&d.join("new.json"), b"x");
        assert!(!d.join("new.json").exists());
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        let _ = std::fs::remove_dir_all(&d);
    }
}
