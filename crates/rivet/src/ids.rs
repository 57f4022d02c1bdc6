//! Identifiers shared by every stage, and the tables they index. They are plain data and import
//! nothing of the stages, so any module may name them without tying itself to another stage.
//!
//! Each id is a newtype over a `NonZeroU32` holding index + 1: ids of different things cannot be
//! mixed up, and `Option<Id>` is as small as the id (no `u32::MAX` sentinels). A table indexed by
//! an id is an `IdVec<Id, T>`, which only its id indexes.
use std::marker::PhantomData;
use std::num::NonZeroU32;

/// An index type usable as the key of an `IdVec`.
pub trait Id: Copy {
    fn from_index(index: usize) -> Self;
    fn index(self) -> usize;
}

macro_rules! define_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(NonZeroU32);

        impl $name {
            /// The id of the `index`th entry (panics past `u32::MAX - 1` entries).
            #[inline]
            pub fn new(index: usize) -> $name {
                match u32::try_from(index).ok().and_then(|i| i.checked_add(1)).and_then(NonZeroU32::new) {
                    Some(n) => $name(n),
                    None => panic!(concat!(stringify!($name), " out of range: {}"), index),
                }
            }
            #[inline]
            pub fn index(self) -> usize {
                (self.0.get() - 1) as usize
            }
            /// The index as the 32-bit number ELF and the tables store.
            #[inline]
            pub fn as_u32(self) -> u32 {
                self.0.get() - 1
            }
        }

        impl Id for $name {
            #[inline]
            fn from_index(index: usize) -> $name {
                $name::new(index)
            }
            #[inline]
            fn index(self) -> usize {
                $name::index(self)
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!(stringify!($name), "({})"), self.index())
            }
        }
    };
}

define_id!(
    /// An object file taking part in the link (command-line object or fetched archive member), in
    /// the order resolution added it.
    FileId
);
define_id!(
    /// A global symbol: one per name, in the order resolution first saw the name.
    SymbolId
);
define_id!(
    /// A shared library taking part in the link.
    SharedId
);
define_id!(
    /// An output section, in creation order (not its place in the file, not its ELF index).
    OutputSectionId
);
define_id!(
    /// A merged (`SHF_MERGE`) input section, in `Merges`.
    MergeId
);

/// An input section: section `index` (its ELF section index) of object `file`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SectionRef {
    pub file: FileId,
    pub index: u32,
}

impl SectionRef {
    pub fn new(file: FileId, index: u32) -> SectionRef {
        SectionRef { file, index }
    }
}

/// A symbol as a relocation names it: a global symbol, or symbol `.1` (its index in the object's
/// symbol table) local to object `.0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    Global(SymbolId),
    Local(FileId, u32),
}

/// A table with one `T` per id of type `I`: indexed by `I` only. It derefs to a slice for
/// iteration; `iter_enumerated` pairs each entry with its id.
#[derive(Clone, PartialEq, Eq)]
pub struct IdVec<I, T> {
    raw: Vec<T>,
    _id: PhantomData<fn(I) -> I>,
}

impl<I: Id, T> IdVec<I, T> {
    pub fn new() -> IdVec<I, T> {
        IdVec { raw: Vec::new(), _id: PhantomData }
    }
    pub fn with_capacity(n: usize) -> IdVec<I, T> {
        IdVec { raw: Vec::with_capacity(n), _id: PhantomData }
    }
    pub fn from_vec(raw: Vec<T>) -> IdVec<I, T> {
        IdVec { raw, _id: PhantomData }
    }
    /// Appends `value`, returning its id.
    pub fn push(&mut self, value: T) -> I {
        let id = I::from_index(self.raw.len());
        self.raw.push(value);
        id
    }
    pub fn reserve(&mut self, additional: usize) {
        self.raw.reserve(additional)
    }
    /// The id the next `push` will return.
    pub fn next_id(&self) -> I {
        I::from_index(self.raw.len())
    }
    /// The id of the first entry `pred` accepts.
    pub fn position(&self, pred: impl FnMut(&T) -> bool) -> Option<I> {
        self.raw.iter().position(pred).map(I::from_index)
    }
    pub fn get(&self, id: I) -> Option<&T> {
        self.raw.get(id.index())
    }
    pub fn get_mut(&mut self, id: I) -> Option<&mut T> {
        self.raw.get_mut(id.index())
    }
    /// Every id, in order.
    pub fn ids(&self) -> impl DoubleEndedIterator<Item = I> + ExactSizeIterator + use<I, T> {
        (0..self.raw.len()).map(I::from_index)
    }
    pub fn iter_enumerated(&self) -> impl DoubleEndedIterator<Item = (I, &T)> + ExactSizeIterator {
        self.raw.iter().enumerate().map(|(i, t)| (I::from_index(i), t))
    }
    pub fn iter_enumerated_mut(&mut self) -> impl DoubleEndedIterator<Item = (I, &mut T)> + ExactSizeIterator {
        self.raw.iter_mut().enumerate().map(|(i, t)| (I::from_index(i), t))
    }
    pub fn resize(&mut self, len: usize, value: T)
    where
        T: Clone,
    {
        self.raw.resize(len, value)
    }
    pub fn into_vec(self) -> Vec<T> {
        self.raw
    }
}

impl<I: Id, T> Default for IdVec<I, T> {
    fn default() -> IdVec<I, T> {
        IdVec::new()
    }
}

impl<I: Id, T> From<Vec<T>> for IdVec<I, T> {
    fn from(raw: Vec<T>) -> IdVec<I, T> {
        IdVec::from_vec(raw)
    }
}

impl<I: Id, T> FromIterator<T> for IdVec<I, T> {
    fn from_iter<It: IntoIterator<Item = T>>(iter: It) -> IdVec<I, T> {
        IdVec::from_vec(iter.into_iter().collect())
    }
}

impl<I: Id, T> std::ops::Index<I> for IdVec<I, T> {
    type Output = T;
    #[inline]
    fn index(&self, id: I) -> &T {
        &self.raw[id.index()]
    }
}

impl<I: Id, T> std::ops::IndexMut<I> for IdVec<I, T> {
    #[inline]
    fn index_mut(&mut self, id: I) -> &mut T {
        &mut self.raw[id.index()]
    }
}

impl<I, T> std::ops::Deref for IdVec<I, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.raw
    }
}

impl<I, T> std::ops::DerefMut for IdVec<I, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.raw
    }
}

impl<'a, I, T> IntoIterator for &'a IdVec<I, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.raw.iter()
    }
}

impl<'a, I, T> IntoIterator for &'a mut IdVec<I, T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.raw.iter_mut()
    }
}

impl<I, T: std::fmt::Debug> std::fmt::Debug for IdVec<I, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.raw.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_option_costs_nothing() {
        assert_eq!(FileId::new(0).index(), 0);
        assert_eq!(SymbolId::new(41).as_u32(), 41);
        assert_eq!(std::mem::size_of::<Option<SymbolId>>(), 4);
        assert!(std::mem::size_of::<Target>() <= 12);
        assert!(FileId::new(1) < FileId::new(2), "ids order as their indices");
    }

    #[test]
    #[should_panic(expected = "FileId out of range")]
    fn an_id_past_the_range_panics() {
        FileId::new(u32::MAX as usize);
    }

    #[test]
    fn idvec_is_indexed_by_its_id() {
        let mut v: IdVec<SymbolId, &str> = IdVec::new();
        let a = v.push("a");
        let b = v.push("b");
        assert_eq!((v[a], v[b]), ("a", "b"));
        assert_eq!(v.next_id(), SymbolId::new(2));
        assert_eq!(v.iter_enumerated().map(|(id, s)| (id.index(), *s)).collect::<Vec<_>>(), [(0, "a"), (1, "b")]);
        assert_eq!(v.ids().collect::<Vec<_>>(), [a, b]);
    }
}
