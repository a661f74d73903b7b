"""The PySide6 app. Importing any part of it first applies the None reference-count work-around
(desktop/pyside_refs.py): PySide6 6.12 on Python 3.11 over-releases None on every call of a
method that returns nothing, which would abort the interpreter after enough of them."""
from desktop.pyside_refs import keep_none_alive

keep_none_alive()
