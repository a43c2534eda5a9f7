//! Files shared by several processes on one machine (the file replay and
//! pin stores): an exclusive lock on `PATH.lock` around read-check-write,
//! bounded reads, and atomic replacement through a randomly named temporary
//! file opened exclusively with mode 0600 (never a predictable path).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Take the exclusive lock of `path` (the file `PATH.lock`, created with mode
/// 0600). The lock is released when the returned file is dropped.
pub(crate) fn lock(path: &Path) -> Result<std::fs::File, String> {
    let mut p = path.to_path_buf().into_os_string();
    p.push(".lock");
    let mut o = std::fs::OpenOptions::new();
    o.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let f = o.open(PathBuf::from(p)).map_err(|e| e.to_string())?;
    f.lock().map_err(|e| format!("lock: {e}"))?;
    Ok(f)
}

/// The text of `path`, or `None` when it does not exist; an error when it
/// is larger than `max` bytes or not UTF-8.
pub(crate) fn read_bounded(path: &Path, max: u64) -> Result<Option<String>, String> {
    let f = match std::fs::File::open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
        Ok(f) => f,
    };
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
/// sync it, and rename it over `path`.
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
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
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
    Ok(())
}
