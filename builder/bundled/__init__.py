"""Tasks whose repository ships with the project as plain files (the example's ``ticketdesk``).

``repo`` makes the files a git repository with a reproducible commit; ``image`` builds the task's
container image locally (no registry); ``tests`` runs the task's test command and grades it.
"""

from .repo import check_folder, commit_folder, git_tree
from .task import EXAMPLE_INSTANCE_ID, EXAMPLE_RECIPE, BundledTask, bundled_tasks

__all__ = ["check_folder", "commit_folder", "git_tree", "BundledTask", "bundled_tasks", "EXAMPLE_RECIPE", "EXAMPLE_INSTANCE_ID"]
