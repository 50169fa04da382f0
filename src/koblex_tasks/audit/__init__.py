"""Judge audit: agreement between labellers (lawyers, LLM judges).

An LLM judge is only trustworthy if it agrees with lawyers about as well as lawyers agree with each other;
this package measures both on the same footing. ``agreement`` holds the generic two-rater statistics;
``legit`` the LEGIT issue labels and their comparison; ``koblex`` the LF-Eval ratings.
"""

from koblex_tasks.audit.agreement import (
    BinaryAgreement,
    BootstrapCI,
    Correlation,
    Estimate,
    RatingCorrelation,
    ScoreAgreement,
    cohen_kappa,
    correlation,
    krippendorff_alpha,
    rating_correlation,
)
from koblex_tasks.audit.legit.agreement import AgreementReport, compare_labellers
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
