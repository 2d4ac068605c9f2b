# Edits 5% of the files under root in place (change number seeds which ones).
import os, random, sys
root, change, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
files = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(root) for f in fs if f.endswith(".rs"))
rng = random.Random(1000 + change)
for p in rng.sample(files, max(1, len(files) // 20)):
    if mode == "write":
        with open(p, "a") as f:
            f.write(f"// edit {change}\n")
    else:
        print(os.path.relpath(p, root))
