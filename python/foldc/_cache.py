"""The compile cache: one folder per compiled model, keyed by everything
that changes what is built; entries are made whole or not at all.

An entry `NAME-KEY/` holds the Python module (and, once asked for, the
driver) and `manifest.json`: the SHA-256 of each file and of each header the
model imports. It is complete when the manifest exists and every hash
matches; anything else (a killed compile, a truncated file, a header edited
since) is rebuilt, never loaded. Builds happen in a private folder and are
moved in; a lock file per entry makes two processes that want the same new
model build it once.
"""
import fcntl
import hashlib
import json
import os
import shutil
import tempfile

from ._errors import CacheError

MANIFEST = "manifest.json"


def default_folder():
    """FOLDC_CACHE, else $XDG_CACHE_HOME/foldc, else ~/.cache/foldc."""
    if os.environ.get("FOLDC_CACHE"):
        return os.environ["FOLDC_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "foldc")


def file_hash(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Entry:
    """One model's folder in the cache; use under `with entry.locked():`."""

    def __init__(self, folder, name, key):
        self.folder = folder
        self.path = os.path.join(folder, f"{name}-{key[:24]}")
        self._lock_path = self.path + ".lock"

    def locked(self):
        return _Lock(self._lock_path)

    def file(self, name):
        return os.path.join(self.path, name)

    def complete(self, needed):
        """Whether the entry holds every file of `needed`, unchanged, and its
        headers are as they were built against."""
        try:
            with open(self.file(MANIFEST)) as f:
                manifest = json.load(f)
            for name in needed:
                if manifest["files"].get(name) != file_hash(self.file(name)):
                    return False
            return all(os.path.exists(h) and file_hash(h) == digest
                       for h, digest in manifest["headers"].items())
        except (OSError, ValueError, KeyError, TypeError):
            return False

    def staging(self):
        """A private folder beside the entry to build in (removed by `add`)."""
        return tempfile.mkdtemp(prefix=".build-", dir=self.folder)

    def add(self, staged, files, headers):
        """Moves `files` (names in the folder `staged`) into the entry and
        records them, with the imported `headers`, in its manifest."""
        os.makedirs(self.path, exist_ok=True)
        manifest = {"files": {}, "headers": {}}
        try:
            with open(self.file(MANIFEST)) as f:
                manifest = json.load(f)
        except (OSError, ValueError):
            pass
        for name in files:
            manifest["files"][name] = file_hash(os.path.join(staged, name))
            os.replace(os.path.join(staged, name), self.file(name))
        manifest["headers"] = {h: file_hash(h) for h in headers}
        temporary = self.file(MANIFEST + ".tmp")
        with open(temporary, "w") as f:
            json.dump(manifest, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, self.file(MANIFEST))
        shutil.rmtree(staged, ignore_errors=True)


def open_folder(folder):
    """Makes the cache folder if needed; a clear error when it cannot be
    written."""
    try:
        os.makedirs(folder, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=folder, prefix=".probe-")
        probe.close()
    except OSError as error:
        raise CacheError(f"the foldc cache folder '{folder}' cannot be written ({error.strerror}); "
                         f"set FOLDC_CACHE to a folder that can") from None
    return folder


class _Lock:
    def __init__(self, path):
        self.path = path

    def __enter__(self):
        self.file = open(self.path, "a")
        fcntl.flock(self.file, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.file, fcntl.LOCK_UN)
        self.file.close()
