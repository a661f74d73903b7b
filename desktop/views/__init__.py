"""One module per view of the main window."""
