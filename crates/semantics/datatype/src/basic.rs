//! The predefined (named) datatypes of the MPI-5.0 ABI, with their memory layout on
//! x86-64 Linux (gfortran defaults for the Fortran types) and their `external32` sizes.

/// How the bytes of one scalar (or one half of a complex, one member of a pair) are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Num {
    I8,
    I16,
    I32,
    I64,
    I128,
    U8,
    U16,
    U32,
    U64,
    /// IEEE binary16 (gfortran `REAL(2)`, not supported by gfortran itself but sized by the ABI).
    F16,
    F32,
    F64,
    /// x87 80-bit extended precision stored in 16 bytes (C `long double`).
    X87,
    /// IEEE binary128 (gfortran `REAL(16)`).
    F128,
}

/// The shape of one element: a scalar, a complex number (two scalars), or a
/// value/index pair of MINLOC/MAXLOC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    Scalar(Num),
    Complex(Num),
    Pair(Num, Num),
}

/// The type classes of the standard's table of reduction operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// C integer types (including the fixed-width ones, signed and unsigned char).
    CInteger,
    FortranInteger,
    /// MPI_AINT, MPI_OFFSET, MPI_COUNT.
    MultiLanguage,
    Floating,
    Complex,
    /// Fortran LOGICAL kinds, C `bool`, C++ `bool`.
    Logical,
    Byte,
    /// Characters (MPI_CHAR, MPI_WCHAR, MPI_CHARACTER): no arithmetic.
    Text,
    Packed,
    /// The value/index pairs of MINLOC/MAXLOC.
    Pair,
}

macro_rules! basic_types {
    ($( $variant:ident = $name:literal, $size:literal, $align:literal, $ext:literal, $class:ident, $shape:expr; )*) => {
        /// Every predefined datatype of the C and Fortran bindings.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Basic { $($variant,)* }

        impl Basic {
            /// All predefined datatypes, in declaration order.
            pub const ALL: &'static [Basic] = &[$(Basic::$variant,)*];

            /// The type's size (MPI_Type_size): bytes of data, excluding the padding of pairs.
            pub fn size(self) -> u64 {
                match self { $(Basic::$variant => $size,)* }
            }

            /// Alignment in memory, which pads the extent of structures holding the type.
            pub fn alignment(self) -> u64 {
                match self { $(Basic::$variant => $align,)* }
            }

            /// The predefined name (MPI_Type_get_name).
            pub fn mpi_name(self) -> &'static str {
                match self { $(Basic::$variant => $name,)* }
            }

            /// Bytes of one element in the `external32` representation.
            pub fn external32_size(self) -> u64 {
                match self { $(Basic::$variant => $ext,)* }
            }

            pub(crate) fn class(self) -> Class {
                match self { $(Basic::$variant => Class::$class,)* }
            }

            pub(crate) fn shape(self) -> Shape {
                use Num::*;
                use Shape::*;
                match self { $(Basic::$variant => $shape,)* }
            }
        }
    };
}

basic_types! {
    Char = "MPI_CHAR", 1, 1, 1, Text, Scalar(I8);
    SignedChar = "MPI_SIGNED_CHAR", 1, 1, 1, CInteger, Scalar(I8);
    UnsignedChar = "MPI_UNSIGNED_CHAR", 1, 1, 1, CInteger, Scalar(U8);
    Byte = "MPI_BYTE", 1, 1, 1, Byte, Scalar(U8);
    Short = "MPI_SHORT", 2, 2, 2, CInteger, Scalar(I16);
    UnsignedShort = "MPI_UNSIGNED_SHORT", 2, 2, 2, CInteger, Scalar(U16);
    Int = "MPI_INT", 4, 4, 4, CInteger, Scalar(I32);
    Unsigned = "MPI_UNSIGNED", 4, 4, 4, CInteger, Scalar(U32);
    Long = "MPI_LONG", 8, 8, 4, CInteger, Scalar(I64);
    UnsignedLong = "MPI_UNSIGNED_LONG", 8, 8, 4, CInteger, Scalar(U64);
    LongLong = "MPI_LONG_LONG", 8, 8, 8, CInteger, Scalar(I64);
    UnsignedLongLong = "MPI_UNSIGNED_LONG_LONG", 8, 8, 8, CInteger, Scalar(U64);
    Float = "MPI_FLOAT", 4, 4, 4, Floating, Scalar(F32);
    Double = "MPI_DOUBLE", 8, 8, 8, Floating, Scalar(F64);
    LongDouble = "MPI_LONG_DOUBLE", 16, 16, 16, Floating, Scalar(X87);
    Wchar = "MPI_WCHAR", 4, 4, 2, Text, Scalar(U32);
    CBool = "MPI_C_BOOL", 1, 1, 1, Logical, Scalar(U8);
    CxxBool = "MPI_CXX_BOOL", 1, 1, 1, Logical, Scalar(U8);
    Int8 = "MPI_INT8_T", 1, 1, 1, CInteger, Scalar(I8);
    Int16 = "MPI_INT16_T", 2, 2, 2, CInteger, Scalar(I16);
    Int32 = "MPI_INT32_T", 4, 4, 4, CInteger, Scalar(I32);
    Int64 = "MPI_INT64_T", 8, 8, 8, CInteger, Scalar(I64);
    Uint8 = "MPI_UINT8_T", 1, 1, 1, CInteger, Scalar(U8);
    Uint16 = "MPI_UINT16_T", 2, 2, 2, CInteger, Scalar(U16);
    Uint32 = "MPI_UINT32_T", 4, 4, 4, CInteger, Scalar(U32);
    Uint64 = "MPI_UINT64_T", 8, 8, 8, CInteger, Scalar(U64);
    Aint = "MPI_AINT", 8, 8, 8, MultiLanguage, Scalar(I64);
    Offset = "MPI_OFFSET", 8, 8, 8, MultiLanguage, Scalar(I64);
    Count = "MPI_COUNT", 8, 8, 8, MultiLanguage, Scalar(I64);
    CFloatComplex = "MPI_C_FLOAT_COMPLEX", 8, 4, 8, Complex, Complex(F32);
    CDoubleComplex = "MPI_C_DOUBLE_COMPLEX", 16, 8, 16, Complex, Complex(F64);
    CLongDoubleComplex = "MPI_C_LONG_DOUBLE_COMPLEX", 32, 16, 32, Complex, Complex(X87);
    CxxFloatComplex = "MPI_CXX_FLOAT_COMPLEX", 8, 4, 8, Complex, Complex(F32);
    CxxDoubleComplex = "MPI_CXX_DOUBLE_COMPLEX", 16, 8, 16, Complex, Complex(F64);
    CxxLongDoubleComplex = "MPI_CXX_LONG_DOUBLE_COMPLEX", 32, 16, 32, Complex, Complex(X87);
    Packed = "MPI_PACKED", 1, 1, 1, Packed, Scalar(U8);
    Logical = "MPI_LOGICAL", 4, 4, 4, Logical, Scalar(I32);
    Integer = "MPI_INTEGER", 4, 4, 4, FortranInteger, Scalar(I32);
    Real = "MPI_REAL", 4, 4, 4, Floating, Scalar(F32);
    DoublePrecision = "MPI_DOUBLE_PRECISION", 8, 8, 8, Floating, Scalar(F64);
    Complex = "MPI_COMPLEX", 8, 4, 8, Complex, Complex(F32);
    DoubleComplex = "MPI_DOUBLE_COMPLEX", 16, 8, 16, Complex, Complex(F64);
    Character = "MPI_CHARACTER", 1, 1, 1, Text, Scalar(U8);
    Logical1 = "MPI_LOGICAL1", 1, 1, 1, Logical, Scalar(I8);
    Logical2 = "MPI_LOGICAL2", 2, 2, 2, Logical, Scalar(I16);
    Logical4 = "MPI_LOGICAL4", 4, 4, 4, Logical, Scalar(I32);
    Logical8 = "MPI_LOGICAL8", 8, 8, 8, Logical, Scalar(I64);
    Logical16 = "MPI_LOGICAL16", 16, 16, 16, Logical, Scalar(I128);
    Integer1 = "MPI_INTEGER1", 1, 1, 1, FortranInteger, Scalar(I8);
    Integer2 = "MPI_INTEGER2", 2, 2, 2, FortranInteger, Scalar(I16);
    Integer4 = "MPI_INTEGER4", 4, 4, 4, FortranInteger, Scalar(I32);
    Integer8 = "MPI_INTEGER8", 8, 8, 8, FortranInteger, Scalar(I64);
    Integer16 = "MPI_INTEGER16", 16, 16, 16, FortranInteger, Scalar(I128);
    Real2 = "MPI_REAL2", 2, 2, 2, Floating, Scalar(F16);
    Real4 = "MPI_REAL4", 4, 4, 4, Floating, Scalar(F32);
    Real8 = "MPI_REAL8", 8, 8, 8, Floating, Scalar(F64);
    Real16 = "MPI_REAL16", 16, 16, 16, Floating, Scalar(F128);
    Complex4 = "MPI_COMPLEX4", 4, 2, 4, Complex, Complex(F16);
    Complex8 = "MPI_COMPLEX8", 8, 4, 8, Complex, Complex(F32);
    Complex16 = "MPI_COMPLEX16", 16, 8, 16, Complex, Complex(F64);
    Complex32 = "MPI_COMPLEX32", 32, 16, 32, Complex, Complex(F128);
    FloatInt = "MPI_FLOAT_INT", 8, 4, 8, Pair, Pair(F32, I32);
    DoubleInt = "MPI_DOUBLE_INT", 12, 8, 12, Pair, Pair(F64, I32);
    LongInt = "MPI_LONG_INT", 12, 8, 8, Pair, Pair(I64, I32);
    TwoInt = "MPI_2INT", 8, 4, 8, Pair, Pair(I32, I32);
    ShortInt = "MPI_SHORT_INT", 6, 4, 6, Pair, Pair(I16, I32);
    LongDoubleInt = "MPI_LONG_DOUBLE_INT", 20, 16, 20, Pair, Pair(X87, I32);
    TwoReal = "MPI_2REAL", 8, 4, 8, Pair, Pair(F32, F32);
    TwoDoublePrecision = "MPI_2DOUBLE_PRECISION", 16, 8, 16, Pair, Pair(F64, F64);
    TwoInteger = "MPI_2INTEGER", 8, 4, 8, Pair, Pair(I32, I32);
}

impl Basic {
    /// The two member types of a MINLOC/MAXLOC pair, which the standard defines as if
    /// built with MPI_Type_create_struct; None for other types.
    pub fn pair_members(self) -> Option<(Basic, Basic)> {
        use Basic::*;
        Some(match self {
            FloatInt => (Float, Int),
            DoubleInt => (Double, Int),
            LongInt => (Long, Int),
            TwoInt => (Int, Int),
            ShortInt => (Short, Int),
            LongDoubleInt => (LongDouble, Int),
            TwoReal => (Real, Real),
            TwoDoublePrecision => (DoublePrecision, DoublePrecision),
            TwoInteger => (Integer, Integer),
            _ => return None,
        })
    }

    /// Offset of the second member of a pair in memory (after alignment padding).
    pub(crate) fn pair_index_offset(self) -> Option<u64> {
        let (value, index) = self.pair_members()?;
        Some(value.size().next_multiple_of(index.alignment()))
    }

    /// The extent in memory: the size rounded up to the alignment for pairs, as for
    /// the C struct `{value; index;}` (e.g. MPI_DOUBLE_INT: size 12, extent 16).
    pub fn extent(self) -> u64 {
        self.size().next_multiple_of(self.alignment())
    }

    /// Number of basic elements (MPI_Get_elements) in one element: 2 for the pairs.
    pub(crate) fn element_count(self) -> u64 {
        if self.pair_members().is_some() {
            2
        } else {
            1
        }
    }
}
