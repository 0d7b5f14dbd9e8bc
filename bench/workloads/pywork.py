import collections
import csv
import datetime
import decimal
import email.message
import hashlib
import io
import json
import random
import re
import sqlite3
import statistics
import urllib.parse
import xml.etree.ElementTree as ET

rnd = random.Random(42)
rows = [{"id": i, "name": "item%d" % i, "price": str(decimal.Decimal(rnd.randint(1, 10**6)) / 100),
         "when": (datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 365)).isoformat()} for i in range(3000)]
blob = json.dumps(rows)
back = json.loads(blob)
buf = io.StringIO()
w = csv.DictWriter(buf, fieldnames=list(back[0]))
w.writeheader()
w.writerows(back)
counts = collections.Counter(re.findall(r"item(\d)", buf.getvalue()))
db = sqlite3.connect(":memory:")
db.execute("create table t (id integer, name text, price text)")
db.executemany("insert into t values (?, ?, ?)", [(r["id"], r["name"], r["price"]) for r in back])
total = db.execute("select count(*), sum(cast(price as real)) from t").fetchone()
root = ET.fromstring("<r>" + "".join("<i n='%d'/>" % i for i in range(500)) + "</r>")
msg = email.message.EmailMessage()
msg["Subject"] = urllib.parse.quote("bench %s" % hashlib.sha256(blob.encode()).hexdigest())
print(total, len(root), statistics.mean(int(k) for k in counts.elements()), msg["Subject"][:20])
