//! A map for the passes' scratch work: most of what a pass keys by node or
//! monomial has a handful of entries, where searching a short inline list
//! beats hashing and allocating; a generated kernel can have thousands,
//! where the map adds a hash index. A utility below every layer, like
//! [`crate::deep`].
//!
//! Entries keep the order they were first inserted in, so iteration is
//! deterministic and independent of hashing.

use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::hash::Hash;

/// Past this many entries, a map keeps a hash index.
const SCAN: usize = 24;

/// An insertion-ordered map, inline up to `N` entries, searched in place up
/// to [`SCAN`] and through a hash index beyond.
#[derive(Clone, Debug)]
pub struct SmallMap<K, V, const N: usize> {
    items: SmallVec<[(K, V); N]>,
    index: Option<FxHashMap<K, usize>>,
}

impl<K, V, const N: usize> Default for SmallMap<K, V, N> {
    fn default() -> Self {
        SmallMap {
            items: SmallVec::new(),
            index: None,
        }
    }
}

impl<K: Eq + Hash + Clone, V, const N: usize> SmallMap<K, V, N> {
    pub fn new() -> Self {
        Self::default()
    }

    fn position(&self, k: &K) -> Option<usize> {
        match &self.index {
            Some(ix) => ix.get(k).copied(),
            None => self.items.iter().position(|t| &t.0 == k),
        }
    }

    /// The value of `k`, inserted by `make` when `k` is new.
    pub fn entry_or_insert_with(&mut self, k: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.position(&k) {
            Some(i) => i,
            None => self.push(k, make()),
        };
        &mut self.items[i].1
    }

    /// Sets the value of `k`; returns whether `k` is new.
    pub fn insert(&mut self, k: K, v: V) -> bool {
        match self.position(&k) {
            Some(i) => {
                self.items[i].1 = v;
                false
            }
            None => {
                self.push(k, v);
                true
            }
        }
    }

    fn push(&mut self, k: K, v: V) -> usize {
        let i = self.items.len();
        if let Some(ix) = &mut self.index {
            ix.insert(k.clone(), i);
        } else if i == SCAN {
            let mut ix: FxHashMap<K, usize> = self
                .items
                .iter()
                .enumerate()
                .map(|(j, t)| (t.0.clone(), j))
                .collect();
            ix.insert(k.clone(), i);
            self.index = Some(ix);
        }
        self.items.push((k, v));
        i
    }

    pub fn get(&self, k: &K) -> Option<&V> {
        self.position(k).map(|i| &self.items[i].1)
    }

    pub fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        self.position(k).map(|i| &mut self.items[i].1)
    }

    pub fn contains_key(&self, k: &K) -> bool {
        self.position(k).is_some()
    }

    /// `(key, value)` in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.items.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.items.iter().map(|t| &t.0)
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.items.iter().map(|t| &t.1)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl<K: Eq + Hash + Clone, V: Default, const N: usize> SmallMap<K, V, N> {
    /// The value of `k`, its default when `k` is new.
    pub fn entry(&mut self, k: K) -> &mut V {
        self.entry_or_insert_with(k, V::default)
    }
}

type Pairs<'a, K, V> =
    std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;

impl<'a, K, V, const N: usize> IntoIterator for &'a SmallMap<K, V, N> {
    type Item = (&'a K, &'a V);
    type IntoIter = Pairs<'a, K, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter().map(|(k, v)| (k, v))
    }
}

impl<K, V, const N: usize> IntoIterator for SmallMap<K, V, N> {
    type Item = (K, V);
    type IntoIter = smallvec::IntoIter<[(K, V); N]>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

/// A set on the same terms: insertion-ordered, searched in place while small.
#[derive(Clone, Debug)]
pub struct SmallSet<K, const N: usize>(SmallMap<K, (), N>);

impl<K, const N: usize> Default for SmallSet<K, N> {
    fn default() -> Self {
        SmallSet(SmallMap::default())
    }
}

impl<K: Eq + Hash + Clone, const N: usize> SmallSet<K, N> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `k`; returns whether it is new.
    pub fn insert(&mut self, k: K) -> bool {
        self.0.insert(k, ())
    }

    pub fn contains(&self, k: &K) -> bool {
        self.0.contains_key(k)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &K> {
        self.0.keys()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_answers_alike_searched_in_place_and_hashed() {
        let mut m: SmallMap<u32, u32, 4> = SmallMap::new();
        for i in 0..100u32 {
            *m.entry(i % 40) += i;
            assert_eq!(m.len(), (i as usize + 1).min(40));
        }
        for k in 0..40u32 {
            let want: u32 = (0..100).filter(|i| i % 40 == k).sum();
            assert_eq!(m.get(&k), Some(&want));
        }
        assert_eq!(m.get(&40), None);
        // Insertion order, whether or not the index was built.
        assert!(m.keys().copied().eq(0..40));
        assert!(!m.insert(3, 0));
        assert_eq!(m.get(&3), Some(&0));
        let mut s: SmallSet<u32, 2> = SmallSet::new();
        assert!(s.insert(7) && !s.insert(7) && s.contains(&7) && !s.contains(&8));
    }
}
