//! Jobs (bugs and change requests): the job spec, a job's values checked against it, and the
//! job expression language `jobs -e` searches with.

pub mod expr;
pub mod spec;
pub mod values;

pub use expr::{Expr, ExprError, Op, Term, WordRange, glob};
pub use spec::{FieldType, JobField, JobSpec, JobSpecError, NEW_JOB, Persistence};
pub use values::{Job, JobError, Presets, check_job_name, format_date, parse_date};
