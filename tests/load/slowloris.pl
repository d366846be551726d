#!/usr/bin/perl
# slowloris.pl — hold CONNS connections open against HOST:PORT the way a
# slow or hostile client does: each sends a request line and then one more
# header line every INTERVAL seconds, never finishing its headers, for
# SECONDS. Source addresses rotate over 127.0.0.2 … 127.0.0.(1 + ADDRS)
# (all of 127/8 is local), so per-address limits cannot hide the load.
# Prints one line when every connection is open ("SLOWLORIS holding N")
# and one at the end:
#   SLOWLORIS opened=N refused=N closed_by_server=N open_at_end=N
#   usage: perl slowloris.pl HOST PORT CONNS SECONDS [INTERVAL [ADDRS]]
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;
use Time::HiRes qw(time sleep);

my ($host, $port, $conns, $seconds, $interval, $addrs) = @ARGV;
die "usage: slowloris.pl HOST PORT CONNS SECONDS [INTERVAL [ADDRS]]\n"
    unless defined $seconds;
$interval //= 5;
$addrs    //= 50;
$SIG{PIPE} = 'IGNORE';
$| = 1;

my (@socks, $refused);
$refused = 0;
for my $i (0 .. $conns - 1) {
    my $s = IO::Socket::INET->new(
        PeerAddr  => $host,
        PeerPort  => $port,
        LocalAddr => '127.0.0.' . (2 + $i % $addrs),
        Proto     => 'tcp',
        Timeout   => 5,
    );
    if (!$s) { $refused++; next; }
    $s->autoflush(1);
    # a real request, never finished: the server must keep it as pending
    print $s "POST /attention/dot HTTP/1.1\r\nHost: t\r\n";
    push @socks, $s;
}
my $opened = @socks;
print "SLOWLORIS holding $opened\n";

my %closed;
my $sel = IO::Select->new(@socks);
my $end = time + $seconds;
my $line = 0;
while (time < $end) {
    my $next = time + $interval;
    $line++;
    for my $s (@socks) {
        next if $closed{$s};
        if (!defined syswrite($s, "X-Slow-$line: 1\r\n")) { $closed{$s} = 1; }
    }
    # anything readable now is an answer or an EOF: the server gave up
    while ((my $left = ($next < $end ? $next : $end) - time) > 0) {
        for my $s ($sel->can_read($left)) {
            my $buf;
            my $n = sysread($s, $buf, 4096);
            if (!$n) { $closed{$s} = 1; $sel->remove($s); }
        }
    }
}
my $closed = keys %closed;
printf "SLOWLORIS opened=%d refused=%d closed_by_server=%d open_at_end=%d\n",
    $opened, $refused, $closed, $opened - $closed;
close $_ for @socks;
