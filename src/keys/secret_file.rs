//! Reading a secret from a file (a PKCS#11 PIN, a fleet cache secret): the
//! file must be a regular file that only its owner can read or write, and
//! it is opened without blocking.
//!
//! * `O_NONBLOCK` on the open (POSIX `open`, "O_NONBLOCK ... for a FIFO"):
//!   a FIFO with no writer planted at the path opens at once instead of
//!   hanging the key load, and is then refused by `fstat` on the open file
//!   (not on the path, which may be swapped in between).
//! * No permission bit for group or others (mode `0600` or `0400`): a
//!   secret others can read is known to them (a fleet secret lets its
//!   reader forge key-cache entries every verifier accepts), and one others
//!   can write is theirs to choose.
//! * At most `max` bytes are read; the buffer is zeroed when dropped.

use std::io::Read;
use std::path::Path;

/// Why a secret file is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SecretFileError {
    /// It could not be opened or read, or is larger than the cap.
    Io(String),
    /// It is not a regular file, or its group or others have access.
    NotPrivate(String),
}

/// The contents of `path`, a regular file of at most `max` bytes that
/// only its owner may read or write ([module docs](self)).
pub(crate) fn read_private(
    path: &Path,
    max: u64,
) -> Result<zeroize::Zeroizing<Vec<u8>>, SecretFileError> {
    let io = |e: std::io::Error| SecretFileError::Io(e.to_string());
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK);
    }
    let f = o.open(path).map_err(io)?;
    let meta = f.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(SecretFileError::NotPrivate("not a regular file".into()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let mode = meta.mode() & 0o7777;
        if mode & 0o077 != 0 {
            return Err(SecretFileError::NotPrivate(format!(
                "open to its group or others (mode {mode:o})"
            )));
        }
    }
    let mut buf = zeroize::Zeroizing::new(Vec::new());
    f.take(max + 1).read_to_end(&mut buf).map_err(io)?;
    if buf.len() as u64 > max {
        return Err(SecretFileError::Io(format!("larger than {max} bytes")));
    }
    Ok(buf)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!(
            "agentsig-secret-file-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn only_a_private_regular_file_is_read() {
        let d = dir();
        let p = d.join("s");
        std::fs::write(&p, "secret\n").unwrap();
        for mode in [0o644, 0o640, 0o604, 0o660, 0o622] {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            assert!(
                matches!(read_private(&p, 64), Err(SecretFileError::NotPrivate(_))),
                "{mode:o}"
            );
        }
        for mode in [0o600, 0o400] {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            assert_eq!(read_private(&p, 64).unwrap().as_slice(), b"secret\n");
        }
        assert!(matches!(read_private(&p, 3), Err(SecretFileError::Io(_))));
        assert!(matches!(
            read_private(&d, 64),
            Err(SecretFileError::NotPrivate(_))
        ));
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A FIFO with no writer: refused at once, the open does not block.
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let d = dir();
        let p = d.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&p).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: mkfifo is not available");
            return;
        }
        assert!(matches!(
            read_private(&p, 64),
            Err(SecretFileError::NotPrivate(_))
        ));
        let _ = std::fs::remove_dir_all(&d);
    }
}
