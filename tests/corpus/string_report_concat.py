# Expected: violation (assertion)
# Workers build a report by `report += name + ";"` on a global string: the read-modify-write loses a name.
import threading

report = ""


def add(name):
    global report
    report += name + ";"


threads = [threading.Thread(target=add, args=(name,)) for name in ("ann", "bob")]
for t in threads:
    t.start()
for t in threads:
    t.join()
names = report.rstrip(";").split(";")
assert sorted(names) == ["ann", "bob"], report
