"""gnode_truth TRUTH FS NID FIELD [STEPS]: the rate at which the simulator
actually moved FIELD of client NID on filesystem FS over its last STEPS
(default 10) steps, as lharvestd divides (aggtruth.rates_between).
it_gnode.sh compares a node's page with it."""

import sys

import aggtruth


def main():
    path, fs, nid, field = sys.argv[1:5]
    n = int(sys.argv[5]) if len(sys.argv) > 5 else 10
    try:
        steps = aggtruth.load_truth(path)
    except aggtruth.CheckError as e:
        sys.exit(str(e))
    rate = aggtruth.rates_between(steps[-1 - n], steps[-1], [field])
    print("%.2f" % rate.get((fs, nid, field), 0.0))


if __name__ == "__main__":
    main()
