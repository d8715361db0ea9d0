"""User-facing errors.

Anything a user can cause (a wrong path, a bad YAML value, a corrupt video, an unreachable
server) raises a subclass of `VideomemError` whose message is one line naming the problem; the
CLI prints that line without a traceback. Bugs stay ordinary exceptions, with tracebacks.
"""


class VideomemError(Exception):
    """A problem the user can fix; `str(err)` is a complete one-line explanation."""


class ConfigError(VideomemError):
    """A YAML profile is missing, unparsable or has a bad value."""


class TimeFormatError(VideomemError):
    """A time string in none of the accepted forms."""


class VideoError(VideomemError):
    """A video cannot be probed or decoded."""


class VideoIdError(VideomemError):
    """A file name that cannot be a video's id (store/ids.py says why)."""


class StoreError(VideomemError):
    """A store directory is missing, from a newer schema, or inconsistent."""


class ModelError(VideomemError):
    """A model backend failed: unreachable server, bad profile, malformed output after retries."""


class MalformedOutputError(ModelError):
    """A model's output stayed unusable after the bounded re-asks: a fault of one request, not
    of the backend, so a long run records it against that request and goes on."""

    def __init__(self, message: str, reply: str = "") -> None:
        super().__init__(message)
        self.reply = reply
        """The last unusable reply, kept with the recorded failure."""


class SetupError(VideomemError):
    """The machine cannot run what the profiles ask (a check of `videomem doctor` failed): a
    missing package or GPU, a port taken, an image limit exceeded."""


class TranscriptError(VideomemError):
    """A transcript or imported caption file (.srt, .vtt, .json) cannot be read, is misnamed or
    has a malformed segment."""


class SynthError(VideomemError):
    """A scripted benchmark cannot be generated as asked (`videomem synth`): an option out of
    range or at odds with another, an output directory that already holds one, or a generated
    corpus the second writer cannot read."""
