# Generates a source-like text tree: N files, average ~7 KB, deterministic.
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(42)
words = ["fn","let","mut","self","return","match","if","else","for","while","impl","struct","pub",
 "use","mod","crate","Option","Result","Vec","String","None","Some","Ok","Err","config","value",
 "index","buffer","reader","writer","count","total","path","name","error","state","digest","store",
 "=","==","+=","->","=>","{","}","(",")","[","]",";",",",".","&","*","0","1","42","len","push"]
for i in range(n):
    d = os.path.join(root, f"d{i % 97:02d}", f"s{(i // 97) % 37:02d}")
    os.makedirs(d, exist_ok=True)
    target = rng.randint(2000, 12000)
    lines, size = [], 0
    while size < target:
        indent = "    " * rng.randint(0, 3)
        line = indent + " ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
        lines.append(line); size += len(line) + 1
    with open(os.path.join(d, f"f{i:06d}.rs"), "w") as f:
        f.write("\n".join(lines) + "\n")
