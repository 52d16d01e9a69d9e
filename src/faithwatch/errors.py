"""Exceptions with messages meant for users."""


class FaithwatchError(Exception):
    """Base class of faithwatch's user-facing errors."""


class ModelNotAvailableError(FaithwatchError):
    """The requested model (or the embedded model package) cannot be loaded."""


class InputError(FaithwatchError, ValueError):
    """The input (question, context, response, record) is unusable; the message says why. ``names``: the
    arguments the message names (``dtype``), which the command line writes as its flags (``--dtype``)."""

    def __init__(self, message: str = "", *, names: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.names = names


def check_bools(**values: object) -> None:
    """Each of ``values`` (an argument of the Python API) must be ``True`` or ``False``: a string such as ``"no"``
    was taken as true."""
    for name, value in values.items():
        if isinstance(value, str) or value not in (True, False):
            raise InputError(f"{name} must be True or False, got {value!r}", names=(name,))


class ContextTooLongError(InputError):
    """The prompt does not fit the model window under the chosen truncation policy."""


class NonFiniteError(FaithwatchError, ArithmeticError):
    """A computed number was NaN or infinite; faithwatch never emits such values silently."""
