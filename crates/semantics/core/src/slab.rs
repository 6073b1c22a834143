//! A slab: objects addressed by small integer ids that stay stable while the object
//! lives, with freed slots reused. Ids carry a generation so a stale id (a request freed
//! and its slot reused) is detected instead of aliasing another object.

pub struct Slab<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
}

struct Slot<T> {
    generation: u32,
    value: Option<T>,
}

/// A slot index and the generation it was allocated in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id {
    pub index: u32,
    pub generation: u32,
}

impl Id {
    /// Packs into 64 bits (carried on the wire as a request id).
    pub fn to_u64(self) -> u64 {
        (self.generation as u64) << 32 | self.index as u64
    }

    pub fn from_u64(v: u64) -> Id {
        Id {
            index: v as u32,
            generation: (v >> 32) as u32,
        }
    }
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    /// An empty slab, usable in a `static`.
    pub const fn new_const() -> Slab<T> {
        Slab {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }

    pub fn insert(&mut self, value: T) -> Id {
        if let Some(index) = self.free.pop() {
            let slot = &mut self.slots[index as usize];
            slot.generation = slot.generation.wrapping_add(1);
            slot.value = Some(value);
            Id {
                index,
                generation: slot.generation,
            }
        } else {
            self.slots.push(Slot {
                generation: 0,
                value: Some(value),
            });
            Id {
                index: (self.slots.len() - 1) as u32,
                generation: 0,
            }
        }
    }

    pub fn get(&self, id: Id) -> Option<&T> {
        self.slots
            .get(id.index as usize)
            .filter(|s| s.generation == id.generation)
            .and_then(|s| s.value.as_ref())
    }

    pub fn get_mut(&mut self, id: Id) -> Option<&mut T> {
        self.live_slot(id)?.value.as_mut()
    }

    /// The live object in slot `index`, whatever its generation (handles that carry only
    /// the index use this).
    pub fn by_index(&self, index: u32) -> Option<(Id, &T)> {
        let s = self.slots.get(index as usize)?;
        s.value.as_ref().map(|v| {
            (
                Id {
                    index,
                    generation: s.generation,
                },
                v,
            )
        })
    }

    pub fn remove(&mut self, id: Id) -> Option<T> {
        let v = self.live_slot(id)?.value.take();
        self.free.push(id.index);
        v
    }

    /// Removes the object `id` names, dropping it where it lies: unlike `remove`, a large
    /// `T` (a request) is not first moved out to be dropped.
    pub fn discard(&mut self, id: Id) {
        self.remove_with(id, |_| ());
    }

    /// Removes the object `id` names, dropping it where it lies, and returns what `read`
    /// takes from it first. Cheaper than `remove` when only a field is wanted: a large
    /// `T` (a request) is not moved out to be dropped.
    pub fn remove_with<R>(&mut self, id: Id, read: impl FnOnce(&T) -> R) -> Option<R> {
        let slot = self.live_slot(id)?;
        let r = read(slot.value.as_ref()?);
        slot.value = None;
        self.free.push(id.index);
        Some(r)
    }

    /// The slot `id` names, if it was allocated in `id`'s generation and still holds
    /// its object.
    fn live_slot(&mut self, id: Id) -> Option<&mut Slot<T>> {
        self.slots
            .get_mut(id.index as usize)
            .filter(|s| s.generation == id.generation && s.value.is_some())
    }

    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = (Id, &T)> {
        self.slots.iter().enumerate().filter_map(|(i, s)| {
            s.value.as_ref().map(|v| {
                (
                    Id {
                        index: i as u32,
                        generation: s.generation,
                    },
                    v,
                )
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_ids_do_not_alias_reused_slots() {
        let mut s = Slab::default();
        let a = s.insert("a");
        assert_eq!(s.remove(a), Some("a"));
        let b = s.insert("b");
        assert_eq!(a.index, b.index);
        assert_eq!(s.get(a), None);
        assert_eq!(s.get(b), Some(&"b"));
        assert_eq!(s.remove(a), None);
        assert_eq!(Id::from_u64(b.to_u64()), b);
        assert_eq!(s.by_index(b.index).map(|(id, v)| (id, *v)), Some((b, "b")));
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn remove_with_reads_then_frees_the_slot() {
        let mut s = Slab::default();
        let a = s.insert(String::from("abc"));
        assert_eq!(s.remove_with(a, |v| v.len()), Some(3));
        assert_eq!(s.get(a), None);
        assert_eq!(
            s.remove_with(a, |v| v.len()),
            None,
            "a removed id stays removed"
        );
        assert_eq!(s.len(), 0);
        let b = s.insert(String::from("b"));
        assert_eq!(b.index, a.index, "the slot is reused");
        s.discard(b);
        assert_eq!(s.get(b), None, "a discarded object is gone");
        assert_eq!(s.len(), 0);
        s.discard(b);
        let (c, d) = (s.insert(String::from("c")), s.insert(String::from("d")));
        assert_eq!(c.index, b.index, "the slot is reused");
        assert_ne!(
            d.index, c.index,
            "a second discard does not free the slot again"
        );
    }
}
