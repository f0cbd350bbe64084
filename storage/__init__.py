"""The SQLite project, media access, import and export. The only package that writes SQL."""

from storage._agreement_report import (
    AgreementError,
    AgreementReport,
    NoRatingsError,
    agreement_report,
    rubric_ablation,
)
from storage._annotations import AnnotationError, Annotations
from storage._blind_media import BlindingError, blind_copy
from storage._bundle_format import BundleError
from storage._bundle_merge import Conflict
from storage._bundle_work import (
    MergeConflictError,
    MergeReport,
    WorkExport,
    export_work,
    import_work,
)
from storage._bundles import (
    AssignmentExport,
    BundleOrigin,
    OpenedAssignment,
    bundle_origin,
    export_assignment,
    open_assignment,
)
from storage._caseformat import FORMAT as CASE_FORMAT
from storage._caseformat import CaseFile, CaseImportError, read_case_file
from storage._db import SchemaTooNewError
from storage._episode_records import (
    ActionRecord,
    ActionSource,
    AmbiguousEpisodeError,
    AnomalyRecord,
    ArtifactRecord,
    ConditionRecord,
    EpisodeError,
    EpisodeMode,
    EpisodeNotFoundError,
    EpisodeRecord,
    EpisodeStatus,
    TickRecord,
)
from storage._episodes import Episodes
from storage._export import CSV_COLUMNS, collect, to_csv, to_json
from storage._history import History
from storage._import import ImportReport, find_case_folders, import_cases
from storage._jobs import Job, Jobs, JobStatus
from storage._judge import JudgeRunError, JudgeRuns
from storage._judge_records import (
    CallSummary,
    GateTrace,
    InspectionTrace,
    RecordedAnswers,
    RuleScore,
    RunAnswer,
    RunCall,
    RunFrame,
    RunInspection,
    RunResult,
    RunSubgoal,
    RunSummary,
    RunTrace,
    ScoreFn,
)
from storage._panel_data import ProjectPanel, load_gate_records, load_panel
from storage._profiles import ProfileNotFoundError, Profiles
from storage._project import Project, ProjectError
from storage._records import (
    Case,
    Clutter,
    Domain,
    EvidenceMark,
    Rater,
    Rating,
    Role,
    Subgoal,
    Video,
)
from storage._settings import Settings, SettingsError, load_settings
from storage._studies import Assignment, PanelSelection, Studies, Study, StudyVideo
from storage._study_calibration import (
    CalibrationItem,
    CalibrationReference,
    CalibrationReport,
    CalibrationResult,
    StudyError,
)

__all__ = [
    "CASE_FORMAT",
    "CSV_COLUMNS",
    "ActionRecord",
    "ActionSource",
    "AgreementError",
    "AgreementReport",
    "AmbiguousEpisodeError",
    "AnnotationError",
    "Annotations",
    "AnomalyRecord",
    "ArtifactRecord",
    "Assignment",
    "AssignmentExport",
    "BlindingError",
    "BundleError",
    "BundleOrigin",
    "CalibrationItem",
    "CalibrationReference",
    "CalibrationReport",
    "CalibrationResult",
    "CallSummary",
    "Case",
    "CaseFile",
    "CaseImportError",
    "Clutter",
    "ConditionRecord",
    "Conflict",
    "Domain",
    "EpisodeError",
    "EpisodeMode",
    "EpisodeNotFoundError",
    "EpisodeRecord",
    "EpisodeStatus",
    "Episodes",
    "EvidenceMark",
    "GateTrace",
    "History",
    "ImportReport",
    "InspectionTrace",
    "Job",
    "JobStatus",
    "Jobs",
    "JudgeRunError",
    "JudgeRuns",
    "MergeConflictError",
    "MergeReport",
    "NoRatingsError",
    "OpenedAssignment",
    "PanelSelection",
    "ProfileNotFoundError",
    "Profiles",
    "Project",
    "ProjectError",
    "ProjectPanel",
    "Rater",
    "Rating",
    "RecordedAnswers",
    "Role",
    "RuleScore",
    "RunAnswer",
    "RunCall",
    "RunFrame",
    "RunInspection",
    "RunResult",
    "RunSubgoal",
    "RunSummary",
    "RunTrace",
    "SchemaTooNewError",
    "ScoreFn",
    "Settings",
    "SettingsError",
    "Studies",
    "Study",
    "StudyError",
    "StudyVideo",
    "Subgoal",
    "TickRecord",
    "Video",
    "WorkExport",
    "agreement_report",
    "blind_copy",
    "bundle_origin",
    "collect",
    "export_assignment",
    "export_work",
    "find_case_folders",
    "import_cases",
    "import_work",
    "load_gate_records",
    "load_panel",
    "load_settings",
    "open_assignment",
    "read_case_file",
    "rubric_ablation",
    "to_csv",
    "to_json",
]
