//! A datatype rebuilt with other types in place of its basic ones: the layout a file
//! view has in a data representation whose basic sizes differ from native. Arguments in
//! elements (counts, strides and displacements of `vector`, `indexed`, `subarray`, ...)
//! scale with the new types; those given in bytes (`hvector`, `hindexed`, `struct`,
//! `resized`) stay as they are, as the standard says for file views.

use crate::basic::Basic;
use crate::datatype::Datatype;
use crate::envelope::Ctor;
use crate::error::TypeError;

impl Datatype {
    /// This type's constructors applied again, with `swap(b)` for each basic type `b`.
    pub fn with_basics(&self, swap: &dyn Fn(Basic) -> Datatype) -> Result<Datatype, TypeError> {
        let re = |t: &Datatype| t.with_basics(swap);
        Ok(match self.ctor() {
            Ctor::Named(b) | Ctor::F90(_, b) => swap(*b),
            Ctor::Marker(m) => Datatype::marker(*m),
            Ctor::Dup(old) => re(old)?,
            Ctor::Contiguous(n, old) => Datatype::contiguous(*n, &re(old)?)?,
            Ctor::Vector(n, bl, stride, old) => Datatype::vector(*n, *bl, *stride, &re(old)?)?,
            Ctor::Hvector(n, bl, stride, old) => Datatype::hvector(*n, *bl, *stride, &re(old)?)?,
            Ctor::Indexed(bls, displs, old) => Datatype::indexed(bls, displs, &re(old)?)?,
            Ctor::Hindexed(bls, displs, old) => Datatype::hindexed(bls, displs, &re(old)?)?,
            Ctor::IndexedBlock(bl, displs, old) => Datatype::indexed_block(*bl, displs, &re(old)?)?,
            Ctor::HindexedBlock(bl, displs, old) => {
                Datatype::hindexed_block(*bl, displs, &re(old)?)?
            }
            Ctor::Struct(bls, displs, types) => {
                let types = types.iter().map(re).collect::<Result<Vec<_>, _>>()?;
                Datatype::structure(bls, displs, &types)?
            }
            Ctor::Subarray(sizes, subsizes, starts, order, old) => {
                Datatype::subarray(sizes, subsizes, starts, *order, &re(old)?)?
            }
            Ctor::Darray(d) => Datatype::darray(
                d.size,
                d.rank,
                &d.gsizes,
                &d.distribs,
                &d.dargs,
                &d.psizes,
                d.order,
                &re(&d.old)?,
            )?,
            Ctor::Resized(lb, extent, old) => Datatype::resized(&re(old)?, *lb, *extent)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_arguments_scale_and_byte_arguments_stay() {
        let int = Datatype::basic(Basic::Int);
        let wide = |b: Basic| {
            let n = if b == Basic::Int { 8 } else { b.size() };
            Datatype::contiguous(n, &Datatype::basic(Basic::Byte)).unwrap()
        };
        let v = Datatype::vector(2, 1, 3, &int).unwrap();
        let w = v.with_basics(&wide).unwrap();
        assert_eq!((w.size(), w.extent()), (16, 32));
        let r = Datatype::resized(&v, 0, 64)
            .unwrap()
            .with_basics(&wide)
            .unwrap();
        assert_eq!((r.size(), r.extent()), (16, 64));
        let h = Datatype::hvector(2, 1, 12, &int)
            .unwrap()
            .with_basics(&wide)
            .unwrap();
        assert_eq!((h.size(), h.extent()), (16, 20));
    }
}
