# The cffi extension module (generated C): its objects are typed dynamically.
from typing import Any

ffi: Any
lib: Any
