# Relative cost (objective / no-recomputation cost) against the budget, one panel per
# graph, one line per method. Called by bench/run.sh with csv, preset and png set.
# ("pebbling": the exact search's schedule where the portfolio found none, as table.py's heuristic column)
set datafile separator ","
set terminal pngcairo size 1500,1000 font ",9"
set output png
# graphs with at least one schedule of a plotted method (a panel without points is an error)
graphs = system("awk -F, 'NR>1 && $3==\"".preset."\" && $8!=\"nan\" && $5 ~ /^(heuristic|pebbling|milp[+]start|lns|auto|milp-nostart|chen-greedy|one-device)$/ {print $1}' ".csv." | sort -u | tr '\\n' ' '")
methods = "heuristic pebbling milp+start lns auto milp-nostart chen-greedy one-device"
ng = words(graphs)
cols = 3
rows = (ng + cols - 1) / cols
set multiplot layout rows, cols title sprintf("%s: cost / no-recomputation cost vs budget (%% of the no-recomputation peak)", preset)
set key top right
set xrange [45:95]
set grid
do for [g in graphs] {
    set title g noenhanced
    plot for [m in methods] sprintf("< awk -F, '$1==\"%s\" && $3==\"%s\" && $5==\"%s\" && $8!=\"nan\" {print $4\",\"$8}' %s | sort -t, -k1n", g, preset, m, csv) \
         using 1:2 with linespoints title m noenhanced
}
unset multiplot
