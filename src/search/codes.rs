//! The int8 codes of the vector matrix, row after row: built in memory from the index, or
//! read in place from the matrix file (`matrix.bin`) that a process without a backend
//! loads on every semantic search (the warm backend copies them out: `Matrix::into_owned`). At 100k notes those codes are 80 MB or more; copying
//! them out of the file (a read into one buffer, a copy into another, both freshly
//! faulted in and freed again) was most of a cold search, the scan itself a few percent.

use std::ops::{Deref, Range};
use std::sync::Arc;

/// The codes of every row, in row order.
#[derive(Clone)]
pub(crate) enum Codes {
    /// Built here (from the index's vectors, or pushed row by row).
    Owned(Vec<i8>),
    /// A range of the mapped matrix file. The file is only ever replaced by a rename, never
    /// rewritten in place, so the mapped bytes stay the ones whose CRC was checked.
    Mapped {
        map: Arc<memmap2::Mmap>,
        range: Range<usize>,
    },
}

impl Default for Codes {
    fn default() -> Codes {
        Codes::Owned(Vec::new())
    }
}

impl std::fmt::Debug for Codes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let place = match self {
            Codes::Owned(_) => "owned",
            Codes::Mapped { .. } => "mapped",
        };
        write!(f, "Codes({} bytes, {place})", self.len())
    }
}

impl Deref for Codes {
    type Target = [i8];

    fn deref(&self) -> &[i8] {
        match self {
            Codes::Owned(v) => v,
            Codes::Mapped { map, range } => bytemuck::cast_slice(&map[range.clone()]),
        }
    }
}

impl Codes {
    /// The codes as a vector that rows can be appended to (copied out of the file first
    /// when they are mapped; nothing appends to a matrix read from the file today).
    pub(crate) fn to_mut(&mut self) -> &mut Vec<i8> {
        if let Codes::Mapped { .. } = self {
            *self = Codes::Owned(self.to_vec());
        }
        match self {
            Codes::Owned(v) => v,
            Codes::Mapped { .. } => unreachable!("just made owned"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn mapped_codes_read_the_files_bytes_as_signed_and_become_owned_to_grow() {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&[9, 0x7f, 0x80, 0xff, 1]).unwrap();
        // SAFETY: a private temp file nobody else can reach.
        let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
        let mut codes = Codes::Mapped {
            map: Arc::new(map),
            range: 1..4,
        };
        assert_eq!(&*codes, &[127i8, -128, -1]);
        assert!(format!("{codes:?}").contains("3 bytes, mapped"));
        codes.to_mut().push(5);
        assert!(matches!(codes, Codes::Owned(_)));
        assert_eq!(&*codes, &[127i8, -128, -1, 5]);
        assert!(Codes::default().is_empty());
    }
}
