"""Judge audit: agreement between issue-level labellers of LEGIT (lawyers, LLM judges).

An LLM judge is only trustworthy if it agrees with lawyers about as well as lawyers agree with each other;
this package measures both on the same footing.
"""

from koblex_tasks.audit.agreement import (
    AgreementReport,
    BinaryAgreement,
    BootstrapCI,
    Correlation,
    Estimate,
    RatingCorrelation,
    ScoreAgreement,
    cohen_kappa,
    compare_labellers,
    correlation,
    krippendorff_alpha,
    rating_correlation,
)
from koblex_tasks.audit.legit.labels import (
    LabellerSet,
    LabelRow,
    UnitKey,
    UnitLabels,
    is_root,
    labeller_from_records,
    labellers_by_group,
    load_labels,
)

__all__ = [
    "AgreementReport",
    "BinaryAgreement",
    "BootstrapCI",
    "Correlation",
    "Estimate",
    "LabelRow",
    "LabellerSet",
    "RatingCorrelation",
    "ScoreAgreement",
    "UnitKey",
    "UnitLabels",
    "cohen_kappa",
    "compare_labellers",
    "correlation",
    "is_root",
    "krippendorff_alpha",
    "labeller_from_records",
    "labellers_by_group",
    "load_labels",
    "rating_correlation",
]
