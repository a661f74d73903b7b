"""Reverie without the window: the scheduler as a daemon (`reverie serve`), its launchd/systemd
service files, and the status of a workspace's agents and dreams (for the CLI and the app)."""
from core.service.daemon import (Daemon, claim_scheduler, scheduler_holder, scheduler_lock, scheduler_lock_path,
                                 scheduler_running)
from core.service.status import WorkspaceStatus, agent_activity, workspace_status

__all__ = ["Daemon", "WorkspaceStatus", "agent_activity", "scheduler_lock", "scheduler_lock_path",
           "scheduler_running", "workspace_status", "claim_scheduler", "scheduler_holder"]
