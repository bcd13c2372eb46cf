"""The Ticket record and its validation."""

from dataclasses import dataclass, field

from .settings import get_setting

STATUSES = ("open", "in_progress", "closed")


class ValidationError(ValueError):
    """A ticket that breaks a rule; the message names the field."""


@dataclass
class Ticket:
    ticket_id: int
    title: str
    status: str = "open"
    labels: list = field(default_factory=list)

    def validate(self):
        if not self.title.strip():
            raise ValidationError("title: must not be empty")
        if len(self.title) > get_setting("max_title_length"):
            raise ValidationError("title: too long")
        if self.status not in STATUSES:
            raise ValidationError(f"status: must be one of {STATUSES}")
        return self
