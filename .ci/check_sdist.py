"""Check that an sdist holds every file git tracks (but ``.gitignore``), so that its tests,
docs and commands are the clone's: ``python .ci/check_sdist.py dist/umbrella_env-X.tar.gz``."""

import subprocess
import sys
import tarfile

(sdist,) = sys.argv[1:]
with tarfile.open(sdist) as archive:
    names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
tracked = subprocess.run(["git", "ls-files", "-z"], capture_output=True, check=True).stdout.decode("utf-8")
missing = sorted(name for name in tracked.split("\0") if name and name != ".gitignore" and name not in names)
if missing:
    sys.exit(f"{sdist} lacks {len(missing)} tracked file(s): {', '.join(missing[:20])}")
print(f"sdist ok: {len(names)} entries, every tracked file among them")
