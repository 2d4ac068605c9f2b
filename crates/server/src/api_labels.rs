//! Translation of label and branch-spec messages to and from service values.

use keel_proto::v1 as pb;
use keel_service::{BranchSpec, LabelEntryAction, LabelFileChange, LabelSpec};

pub(crate) fn label_to_wire(l: LabelSpec) -> pb::Label {
    pb::Label {
        name: l.name,
        owner: l.owner,
        description: l.description,
        options: l.options,
        revision: l.revision,
        view: l.view,
        updated: l.updated.max(0) as u64,
    }
}

pub(crate) fn label_from_wire(l: pb::Label) -> LabelSpec {
    LabelSpec {
        name: l.name,
        owner: l.owner,
        description: l.description,
        options: l.options,
        revision: l.revision,
        view: l.view,
        updated: 0,
    }
}

pub(crate) fn branch_to_wire(b: BranchSpec) -> pb::Branch {
    pb::Branch {
        name: b.name,
        owner: b.owner,
        description: b.description,
        options: b.options,
        view: b.view,
        updated: b.updated.max(0) as u64,
    }
}

pub(crate) fn branch_from_wire(b: pb::Branch) -> BranchSpec {
    BranchSpec {
        name: b.name,
        owner: b.owner,
        description: b.description,
        options: b.options,
        view: b.view,
        updated: 0,
    }
}

pub(crate) fn label_file(c: LabelFileChange) -> pb::LabelFile {
    pb::LabelFile {
        depot_file: c.depot_file.into_string(),
        rev: c.rev,
        action: match c.action {
            LabelEntryAction::Added => pb::LabelFileAction::Added,
            LabelEntryAction::Updated => pb::LabelFileAction::Updated,
            LabelEntryAction::Deleted => pb::LabelFileAction::Deleted,
        } as i32,
    }
}
