# Type stubs of the compiled module (python/src/*.rs); docstrings live there.
from os import PathLike
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Union

import numpy as np
import numpy.typing as npt

__version__: str

SizeLike = Union["Size", int, float, str]

class Size:
    def __init__(self, text: str) -> None: ...
    @staticmethod
    def bytes(n: int) -> Size: ...
    @staticmethod
    def units(n: int) -> Size: ...
    @staticmethod
    def fraction(f: float) -> Size: ...
    @property
    def kind(self) -> str: ...
    @property
    def value(self) -> Union[int, float]: ...

class Request:
    time: int
    key: int
    size: int
    op: str
    stream: int

class Requests(Iterator[Request]):
    def __iter__(self) -> Requests: ...
    def __next__(self) -> Request: ...

class Trace:
    @staticmethod
    def open(
        path: Union[str, PathLike[str]],
        *,
        format: Optional[str] = None,
        csv: Optional[str] = None,
        page_size: int = 4096,
    ) -> Trace: ...
    @staticmethod
    def synthetic(workload: str, requests: int, *, seed: int = 42) -> Trace: ...
    @property
    def label(self) -> str: ...
    def stats(self) -> Dict[str, Union[int, bool]]: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Requests: ...

class Plugin:
    def __init__(
        self,
        init: Callable[[int], Any],
        hit: Callable[[Any, int, int], None],
        miss: Callable[[Any, int, int], None],
        evict: Callable[[Any, int, int], int],
        remove: Optional[Callable[[Any, int], None]] = None,
        *,
        name: str = "plugin",
    ) -> None: ...

class Cache:
    def __init__(
        self,
        policy: Union[str, Plugin],
        size: SizeLike,
        *,
        trace: Optional[Trace] = None,
        ignore_size: bool = False,
        seed: int = 42,
    ) -> None: ...
    def get(self, key: Union[int, Request], size: Optional[int] = None) -> bool: ...
    def contains(self, key: int) -> bool: ...
    def __contains__(self, key: int) -> bool: ...
    def victims(self, n: int) -> List[int]: ...
    def remove(self, key: int) -> bool: ...
    def process(self, trace: Trace) -> Dict[str, Union[int, float]]: ...
    def __len__(self) -> int: ...
    @property
    def capacity(self) -> int: ...
    @property
    def used(self) -> int: ...
    @property
    def policy(self) -> str: ...

Table = Dict[str, Union[List[str], npt.NDArray[np.uint64], npt.NDArray[np.float64]]]

def policies() -> List[Dict[str, Any]]: ...
def replay(
    trace: Trace,
    policies: Union[str, Iterable[str]],
    sizes: Union[SizeLike, Iterable[SizeLike]],
    *,
    ignore_size: bool = False,
    seed: int = 42,
    admission: str = "always",
    warmup: int = 0,
    threads: Optional[int] = None,
) -> Table: ...
def mrc(
    trace: Trace,
    *,
    method: str = "exact",
    policy: Union[str, Iterable[str], None] = None,
    sizes: Union[SizeLike, Iterable[SizeLike], None] = None,
    points: int = 20,
    ignore_size: bool = False,
    rate: float = 0.01,
    samples: int = 32768,
    adjust: bool = True,
    seed: int = 42,
    threads: Optional[int] = None,
) -> Table: ...
def des_run(path: Union[str, PathLike[str]]) -> List[Dict[str, Any]]: ...
def dust(
    target: str,
    *,
    iterations: int = 300,
    seed: int = 42,
    size_hint: Optional[int] = None,
    judge: str = "auto",
) -> Dict[str, Any]: ...

SweepSpecLike = Union[Dict[str, Any], str, PathLike[str]]

def sweep(
    spec: SweepSpecLike,
    out: Union[str, PathLike[str]],
    *,
    threads: Optional[int] = None,
    traces_at_once: Optional[int] = None,
    memory_budget_bytes: Optional[int] = None,
) -> Dict[str, Union[int, float]]: ...

class SweepDriver:
    def __init__(self, spec: SweepSpecLike, out: Union[str, PathLike[str]]) -> None: ...
    @property
    def spec_json(self) -> str: ...
    def units(self) -> List[Dict[str, Any]]: ...
    def append(self, rows: bytes) -> int: ...
    def close(self) -> None: ...
    def finish(self) -> Dict[str, Union[int, float]]: ...

def sweep_task(
    spec_json: str, path: Union[str, PathLike[str]], *, threads: Optional[int] = None
) -> bytes: ...
def sweep_memory_estimate(spec_json: str, path: Union[str, PathLike[str]]) -> int: ...
