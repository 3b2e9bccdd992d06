# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The scaling figures of BENCHMARKS.md, from bench_dataplane --what scaling:
#   gnuplot -e "dir='bench/results'" bench/plot-scaling.gp
# Reads DIR/scaling-fields.dat and DIR/scaling-list.dat, writes
# DIR/scaling-fields.png and DIR/scaling-list.png. Left: hdrstrip's time
# beside the floor program's and the 2.0x-floor target; right: the ratio.
if (!exists("dir")) dir = "bench/results"

set terminal pngcairo size 1100,440 font "DejaVu Sans,10"
set grid
set key top left
set logscale x
set style data linespoints

# ---- header-block size -------------------------------------------------------
set output dir."/scaling-fields.png"
set multiplot layout 1,2 title "hdrstrip per request against the number of fields (BPF\\_PROG\\_TEST\\_RUN, established connection; 1,448-byte segments)"
set xlabel "fields in the request (log)"
set ylabel "ns per request (log)"
set logscale y
set xtics (10, 30, 100, 500)
set xrange [7:700]
plot dir."/scaling-fields.dat" using 1:4 title "hdrstrip XDP" lw 2 pt 7, \
     "" using 1:7 title "hdrstrip TC" lw 2 pt 5, \
     "" using 1:5 title "floor (XDP)" lw 2 pt 6 dt 2, \
     "" using 1:(2 * $5) title "2.0 x floor: the target" lw 1 dt 3 lc rgb "red"
unset logscale y
set ylabel "hdrstrip / floor"
set yrange [0:*]
set key bottom right
plot dir."/scaling-fields.dat" using 1:6 title "XDP" lw 2 pt 7, \
     "" using 1:9 title "TC" lw 2 pt 5, \
     2 title "target 2.0" lw 1 dt 3 lc rgb "red"
unset multiplot
set yrange [*:*]
set key top left

# ---- list size ---------------------------------------------------------------
set output dir."/scaling-list.png"
set multiplot layout 1,2 title "hdrstrip per packet against the list size (the typical request: 20 fields, 2 internal, one packet)"
set xlabel "names in the list (log)"
set ylabel "ns per packet"
set xtics (10, 100, 1000)
set xrange [7:1500]
set yrange [0:*]
plot dir."/scaling-list.dat" using 1:4 title "hdrstrip XDP" lw 2 pt 7, \
     "" using 1:7 title "hdrstrip TC" lw 2 pt 5, \
     "" using 1:5 title "floor (XDP)" lw 2 pt 6 dt 2, \
     "" using 1:(2 * $5) title "2.0 x floor: the target" lw 1 dt 3 lc rgb "red"
set ylabel "hdrstrip / floor"
set key bottom right
plot dir."/scaling-list.dat" using 1:6 title "XDP" lw 2 pt 7, \
     "" using 1:9 title "TC" lw 2 pt 5, \
     2 title "target 2.0" lw 1 dt 3 lc rgb "red"
unset multiplot
