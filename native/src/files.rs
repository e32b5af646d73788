//! Encoded values stored as files, the way a DirectoryStore stores them: each value goes to
//! a new temporary file that is then renamed over its target, so a reader sees the old
//! value or the new one, never a torn one. The target's missing directories are made.
//!
//! Any failure leaves the value unwritten (its temporary removed) and hands it back: the
//! caller stores it through its store, which knows the rest of the rules (a file where a
//! directory should be, a side directory on another file system) and words the error.

use std::fs::{self, OpenOptions};
use std::io::{self, ErrorKind, IoSlice, Write};
use std::os::fd::IntoRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;


/// Where a batch of values goes: `targets[i]` is value `i`'s file; its temporary is
/// `temp_prefix` + `i` in `temp_directory`, or beside its target when that is None.
pub struct FileTargets {
    pub targets: Vec<String>,
    pub temp_directory: Option<String>,
    pub temp_prefix: String,
}

/// What became of one value.
pub enum Stored {
    /// In its target file.
    Written,
    /// Every element was the fill value: nothing written, the caller deletes the key.
    Fill,
    /// Encoded but not written: the caller stores these bytes itself.
    Unwritten(Vec<u8>),
}

impl FileTargets {
    fn temp_path(&self, i: usize, target: &str) -> String {
        let directory = match &self.temp_directory {
            Some(directory) => directory.as_str(),
            None => parent(target),
        };
        format!("{directory}/{}{i}", self.temp_prefix)
    }
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or(".", |(directory, _)| directory)
}

/// Store value `i` (None: all fill), given as the pieces whose concatenation it is, in
/// `files.targets[i]`.
pub fn store_one(files: &FileTargets, i: usize, value: Option<&[&[u8]]>) -> Stored {
    match value {
        None => Stored::Fill,
        Some(pieces) => {
            let target = &files.targets[i];
            match store_file(pieces, target, &files.temp_path(i, target)) {
                Ok(()) => Stored::Written,
                Err(_) => Stored::Unwritten(pieces.concat()),
            }
        }
    }
}

/// Write `pieces` one after another to the new file `temp`, then rename it over `target`.
pub fn store_file(pieces: &[&[u8]], target: &str, temp: &str) -> io::Result<()> {
    write_new(temp, pieces).or_else(|e| {
        // Temporaries beside their target: the target's directory may not exist yet.
        if e.kind() == ErrorKind::NotFound && parent(temp) == parent(target) {
            fs::create_dir_all(parent(target))?;
            write_new(temp, pieces)
        } else {
            Err(e)
        }
    })?;
    let renamed = fs::rename(temp, target).or_else(|e| {
        if e.kind() == ErrorKind::NotFound && Path::new(temp).exists() {
            fs::create_dir_all(parent(target))?;
            fs::rename(temp, target)
        } else {
            Err(e)
        }
    });
    if renamed.is_err() {
        let _ = fs::remove_file(temp);
    }
    renamed
}

/// Create `path` (never an existing file) holding `pieces`; removed again on failure.
fn write_new(path: &str, pieces: &[&[u8]]) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).mode(0o666).open(path)?;
    let written = write_pieces(&mut file, pieces);
    // close's own error counts (a file system that reports a failed write there): a
    // File's drop would ignore it.
    // SAFETY: the descriptor was just taken from the File, which no longer owns it.
    let closed = unsafe { libc::close(file.into_raw_fd()) };
    let result = written.and(if closed == 0 { Ok(()) } else { Err(io::Error::last_os_error()) });
    if result.is_err() {
        let _ = fs::remove_file(path);
    }
    result
}

/// Write every piece, in order, in as few calls as `writev` allows.
fn write_pieces(file: &mut fs::File, pieces: &[&[u8]]) -> io::Result<()> {
    // writev takes at most IOV_MAX (1024 on Linux) slices a call.
    const SLICES_PER_CALL: usize = 1024;
    let mut slices: Vec<IoSlice<'_>> = pieces.iter().map(|p| IoSlice::new(p)).collect();
    let mut rest = &mut slices[..];
    IoSlice::advance_slices(&mut rest, 0); // drops leading empty pieces
    while !rest.is_empty() {
        let upto = rest.len().min(SLICES_PER_CALL);
        match file.write_vectored(&rest[..upto]) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> String {
        let directory = std::env::temp_dir().join(format!("zarrkit-files-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&directory);
        fs::create_dir_all(&directory).unwrap();
        directory.to_str().unwrap().to_owned()
    }

    #[test]
    fn values_replace_their_targets_and_make_missing_directories() {
        let root = scratch("replace");
        fs::write(format!("{root}/a"), b"old").unwrap();
        let files = FileTargets {
            targets: vec![format!("{root}/a"), format!("{root}/c/0/1"), format!("{root}/b")],
            temp_directory: None,
            temp_prefix: ".tmp-".into(),
        };
        let values: [Option<&[&[u8]]>; 3] = [Some(&[b"new"]), Some(&[b"x"]), None];
        let stored: Vec<Stored> = (0..3).map(|i| store_one(&files, i, values[i])).collect();
        assert!(matches!(stored[0], Stored::Written));
        assert!(matches!(stored[1], Stored::Written));
        assert!(matches!(stored[2], Stored::Fill));
        assert_eq!(fs::read(format!("{root}/a")).unwrap(), b"new");
        assert_eq!(fs::read(format!("{root}/c/0/1")).unwrap(), b"x");
        assert!(!Path::new(&format!("{root}/b")).exists());
        let mut names: Vec<_> = fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        assert_eq!(names, ["a", "c"]); // no temporaries left
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_value_that_cannot_be_written_comes_back_and_leaves_no_temporary() {
        let root = scratch("fail");
        fs::write(format!("{root}/file"), b"").unwrap(); // a file where a directory is needed
        let side = format!("{root}/side");
        fs::create_dir(&side).unwrap();
        let files = FileTargets {
            targets: vec![format!("{root}/file/x"), format!("{root}/ok")],
            temp_directory: Some(side.clone()),
            temp_prefix: "t".into(),
        };
        let values: [Option<&[&[u8]]>; 2] = [Some(&[b"v", b"", b"v"]), Some(&[b"w"])];
        let stored: Vec<Stored> = (0..2).map(|i| store_one(&files, i, values[i])).collect();
        assert!(matches!(&stored[0], Stored::Unwritten(v) if v == b"vv"));
        assert!(matches!(stored[1], Stored::Written));
        assert_eq!(fs::read_dir(&side).unwrap().count(), 0);
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_value_in_more_pieces_than_one_call_takes_is_written_whole_in_order() {
        let root = scratch("pieces");
        let owned: Vec<Vec<u8>> = (0..3000u32)
            .map(|i| if i % 7 == 0 { vec![] } else { i.to_le_bytes()[..(i % 4) as usize + 1].to_vec() })
            .collect();
        let pieces: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        let files = FileTargets {
            targets: vec![format!("{root}/shard")],
            temp_directory: None,
            temp_prefix: ".t".into(),
        };
        assert!(matches!(store_one(&files, 0, Some(&pieces)), Stored::Written));
        assert_eq!(fs::read(format!("{root}/shard")).unwrap(), pieces.concat());
        fs::remove_dir_all(root).unwrap();
    }
}
