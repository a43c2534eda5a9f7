//! Files shared by several processes on one machine (the file replay and
//! pin stores): an exclusive lock on `PATH.lock` around read-check-write,
//! bounded reads, and atomic replacement through a randomly named temporary
//! file opened exclusively with mode 0600 (never a predictable path).
//!
//! Neither the lock file nor the store file is opened through a symbolic
//! link (`O_NOFOLLOW` on unix): a link planted at `STORE.lock` or `STORE` in
//! a shared directory would otherwise make the verifier create or read a
//! file of the planter's choosing. Such a path is refused with an error, as
//! is one that is not a regular file (a FIFO would block the reader). After
//! the rename the directory is synced (unix), so that a power loss cannot
//! roll the store back to an earlier state (a replayed nonce accepted again,
//! a pin forgotten).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Open options that never follow a symbolic link in the last component
/// (`O_NOFOLLOW`, unix) and create files with mode 0600.
fn no_follow(o: &mut std::fs::OpenOptions) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK: a FIFO planted at the path opens at once (and is
        // then refused as not a regular file) instead of blocking the
        // verifier, and every other one waiting on the lock, until a writer
        // comes. It changes nothing for a regular file.
        o.mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    #[cfg(not(unix))]
    let _ = o;
}

/// The error for an `open` that failed: a symbolic link is named as such
/// (`ELOOP` under `O_NOFOLLOW`).
fn open_error(path: &Path, e: std::io::Error) -> String {
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::ELOOP) {
        return format!(
            "{} is a symbolic link: refused (the store and its lock are never opened through a link)",
            path.display()
        );
    }
    format!("{}: {e}", path.display())
}

/// Refuse a file that is not a regular file (a directory, FIFO or device).
fn regular(path: &Path, f: &std::fs::File) -> Result<(), String> {
    let m = f.metadata().map_err(|e| e.to_string())?;
    if !m.is_file() {
        return Err(format!("{} is not a regular file: refused", path.display()));
    }
    Ok(())
}

/// Take the exclusive lock of `path` (the file `PATH.lock`, created with mode
/// 0600, never opened through a symbolic link). The lock is released when
/// the returned file is dropped.
pub(crate) fn lock(path: &Path) -> Result<std::fs::File, String> {
    let mut p = path.to_path_buf().into_os_string();
    p.push(".lock");
    let p = PathBuf::from(p);
    let mut o = std::fs::OpenOptions::new();
    o.read(true).write(true).create(true).truncate(false);
    no_follow(&mut o);
    let f = o.open(&p).map_err(|e| open_error(&p, e))?;
    regular(&p, &f)?;
    f.lock().map_err(|e| format!("lock: {e}"))?;
    Ok(f)
}

/// The text of `path`, or `None` when it does not exist; an error when it
/// is larger than `max` bytes, not UTF-8, a symbolic link or not a regular
/// file.
pub(crate) fn read_bounded(path: &Path, max: u64) -> Result<Option<String>, String> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    no_follow(&mut o);
    let f = match o.open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(open_error(path, e)),
        Ok(f) => f,
    };
    regular(path, &f)?;
    let mut buf = String::new();
    f.take(max + 1)
        .read_to_string(&mut buf)
        .map_err(|e| e.to_string())?;
    if buf.len() as u64 > max {
        return Err(format!("larger than {max} bytes"));
    }
    Ok(Some(buf))
}

/// Replace `path` with `bytes` atomically: write a temporary file with a
/// random name in the same directory (opened with `create_new`, mode 0600),
/// sync it, rename it over `path` (a symbolic link planted at `path` is
/// replaced, never followed), and sync the directory so that the rename
/// itself survives a power loss (unix).
pub(crate) fn replace(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use ring::rand::SecureRandom;
    let mut r = [0u8; 12];
    ring::rand::SystemRandom::new()
        .fill(&mut r)
        .map_err(|_| "no system randomness".to_string())?;
    let suffix: String = r.iter().map(|x| format!("{x:02x}")).collect();
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "store".into());
    let tmp = dir.join(format!(".{name}.{suffix}.tmp"));
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    no_follow(&mut o);
    let result = (|| {
        let mut f = o.open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e.to_string());
    }
    sync_dir(dir).map_err(|e| format!("sync {}: {e}", dir.display()))
}

/// fsync the directory `dir`, making a rename in it durable (unix; a no-op
/// elsewhere).
#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    DIR_SYNCS.with(|c| c.set(c.get() + 1));
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

thread_local! {
    /// Directory syncs made by this thread (observed by the tests).
    static DIR_SYNCS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "agentsig-lockfile-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[cfg(unix)]
    #[test]
    fn planted_lock_symlink_is_refused_and_creates_nothing() {
        let d = tmpdir("locklink");
        let store = d.join("replay.json");
        let target = d.join("victim");
        std::os::unix::fs::symlink(&target, d.join("replay.json.lock")).unwrap();
        let err = lock(&store).unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");
        assert!(!target.exists(), "the lock symlink was followed");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn planted_store_symlink_is_not_read() {
        let d = tmpdir("storelink");
        let secret = d.join("secret");
        std::fs::write(&secret, "not yours").unwrap();
        let store = d.join("pins.json");
        std::os::unix::fs::symlink(&secret, &store).unwrap();
        let err = read_bounded(&store, 1024).unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");
        // Replacing the store replaces the link, never writes through it.
        replace(&store, b"{}").unwrap();
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "not yours");
        assert!(!std::fs::symlink_metadata(&store)
            .unwrap()
            .file_type()
            .is_symlink());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn fifo_store_is_refused() {
        let d = tmpdir("fifo");
        let store = d.join("s.json");
        let st = std::process::Command::new("mkfifo")
            .arg(&store)
            .status()
            .unwrap();
        assert!(st.success());
        // No writer: without O_NONBLOCK the open would block for ever. The
        // read runs on a thread so that a regression fails here instead of
        // hanging the suite (the bound is a hang guard, not a timing).
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn({
            let store = store.clone();
            move || {
                let _ = tx.send(read_bounded(&store, 1024));
            }
        });
        let got = rx.recv_timeout(std::time::Duration::from_secs(30));
        if got.is_err() {
            // Unblock the reader before failing.
            let _ = std::fs::OpenOptions::new().write(true).open(&store);
        }
        let err = got
            .expect("opening a FIFO with no writer blocked")
            .unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn created_files_are_0600() {
        use std::os::unix::fs::PermissionsExt;
        let d = tmpdir("mode");
        let store = d.join("s.json");
        let _l = lock(&store).unwrap();
        replace(&store, b"{}").unwrap();
        for p in [store.clone(), d.join("s.json.lock")] {
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", p.display());
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn replace_syncs_the_directory_after_the_rename() {
        let d = tmpdir("dirsync");
        let store = d.join("s.json");
        let before = DIR_SYNCS.with(|c| c.get());
        replace(&store, b"{\"a\":1}").unwrap();
        assert_eq!(DIR_SYNCS.with(|c| c.get()), before + 1);
        assert_eq!(std::fs::read_to_string(&store).unwrap(), "{\"a\":1}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
