#!/usr/bin/perl
# drain.pl — closed-loop keep-alive clients for a shutdown test: CONNS
# processes each send requests one after another on one connection (the
# bodies in turn), reconnecting when an answer says "Connection: close",
# until SECONDS pass or connecting fails. Every request ends one way:
#   answered      a complete HTTP answer came back;
#   cut           the connection had already carried an answer (so the
#                 server had accepted it) and closed or reset under this
#                 request: a request lost by the server;
#   never_served  the connection closed or reset before its first answer
#                 (a connection still in the kernel's accept queue when the
#                 server stopped listening: never accepted);
# and "refused" counts failed connects. Prints one line:
#   DRAIN answered=N cut=N never_served=N refused=N non2xx=N
#   usage: perl drain.pl HOST PORT SECONDS CONNS PATH=FILE...
use strict;
use warnings;
use IO::Socket::INET;
use Time::HiRes qw(time);

my ($host, $port, $seconds, $conns, @specs) = @ARGV;
die "usage: drain.pl HOST PORT SECONDS CONNS PATH=FILE...\n" unless @specs;
$SIG{PIPE} = 'IGNORE';
my @requests;
for my $spec (@specs) {
    my ($path, $file) = split /=/, $spec, 2;
    open(my $f, '<:raw', $file) or die "$file: $!\n";
    my $body = do { local $/; <$f> };
    close $f;
    push @requests, "POST $path HTTP/1.1\r\nHost: t\r\n"
        . "Content-Type: application/json\r\nContent-Length: "
        . length($body) . "\r\n\r\n" . $body;
}

# One answer from $s: (status, close?) or () when the connection ends first.
sub read_answer {
    my ($s) = @_;
    my $buf = '';
    while ($buf !~ /\r\n\r\n/) {
        my $n = sysread($s, $buf, 65536, length $buf);
        return () unless $n;
    }
    my ($head, $rest) = split /\r\n\r\n/, $buf, 2;
    my ($status) = $head =~ m{^HTTP/1\.[01] (\d{3})};
    my ($len) = $head =~ /^Content-Length:\s*(\d+)/mi;
    my $close = $head =~ /^Connection:\s*close/mi ? 1 : 0;
    $len //= 0;
    while (length($rest) < $len) {
        my $n = sysread($s, $rest, 65536, length $rest);
        return () unless $n;
    }
    return ($status, $close);
}

sub client {
    my ($k) = @_;
    my %n = (answered => 0, cut => 0, never_served => 0, refused => 0,
             non2xx => 0);
    my $end = time + $seconds;
    my $i = $k;
    CONNECTION: while (time < $end) {
        my $s = IO::Socket::INET->new(PeerAddr => $host, PeerPort => $port,
            Proto => 'tcp', Timeout => 5);
        if (!$s) { $n{refused}++; last; }
        my $served = 0;
        while (time < $end) {
            my $req = $requests[$i++ % @requests];
            my $sent = syswrite($s, $req);
            my ($status, $close) =
                defined $sent && $sent == length $req ? read_answer($s) : ();
            if (!defined $status) {
                $n{$served ? 'cut' : 'never_served'}++;
                close $s;
                next CONNECTION;
            }
            $n{answered}++;
            $n{non2xx}++ unless $status =~ /^2/;
            $served++;
            if ($close) { close $s; next CONNECTION; }
        }
        close $s;
    }
    return join ' ', map { "$_=$n{$_}" } sort keys %n;
}

my @pipes;
for my $k (0 .. $conns - 1) {
    pipe(my $r, my $w) or die "pipe: $!\n";
    my $pid = fork // die "fork: $!\n";
    if ($pid == 0) {
        close $r;
        print $w client($k), "\n";
        close $w;
        exit 0;
    }
    close $w;
    push @pipes, $r;
}
my %total;
for my $r (@pipes) {
    my $line = <$r> // '';
    $total{$1} += $2 while $line =~ /(\w+)=(\d+)/g;
    close $r;
}
1 while wait != -1;
printf "DRAIN answered=%d cut=%d never_served=%d refused=%d non2xx=%d\n",
    map { $total{$_} // 0 } qw(answered cut never_served refused non2xx);
