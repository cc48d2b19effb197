"""One exception hierarchy for the package: user mistakes vs. privacy violations vs. bugs."""

from __future__ import annotations

__all__ = [
    "AnonymizerError",
    "DatabaseSetupError",
    "InputError",
    "PrivacyViolation",
    "ReleaseError",
    "ReportError",
]


class AnonymizerError(Exception):
    """Base class of every error this package raises on purpose."""


class InputError(AnonymizerError):
    """Bad input from the user: a file, a parameter or a name. The message says what to do."""


class PrivacyViolation(AnonymizerError):
    """A release (or a candidate release) does not satisfy its privacy model."""


class DatabaseSetupError(AnonymizerError):
    """The database could not be found, installed, started or migrated."""


class ReleaseError(AnonymizerError):
    """A release run failed for a reason that is not a privacy violation."""


class ReportError(AnonymizerError):
    """A release report could not be made or checked (e.g. no browser to render it)."""
