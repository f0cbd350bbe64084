"""The SQLite project, media access, import and export. The only package that writes SQL."""

from storage._annotations import AnnotationError, Annotations
from storage._caseformat import FORMAT as CASE_FORMAT
from storage._caseformat import CaseFile, CaseImportError, read_case_file
from storage._db import SchemaTooNewError
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
from storage._settings import Settings, load_settings

__all__ = [
    "CASE_FORMAT",
    "CSV_COLUMNS",
    "AnnotationError",
    "Annotations",
    "CallSummary",
    "Case",
    "CaseFile",
    "CaseImportError",
    "Clutter",
    "Domain",
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
    "ProfileNotFoundError",
    "Profiles",
    "Project",
    "ProjectError",
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
    "Subgoal",
    "Video",
    "collect",
    "find_case_folders",
    "import_cases",
    "load_settings",
    "read_case_file",
    "to_csv",
    "to_json",
]
