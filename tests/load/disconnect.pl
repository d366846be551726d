#!/usr/bin/perl
# disconnect.pl — clients that go away mid-request, COUNT times each:
#   upload:   headers with Content-Length of the whole BODY_FILE, half of
#             the body, then close;
#   response: the whole request (BODY_FILE to PATH, whose answer is large),
#             read the first 4 KiB of the answer, then close with the rest
#             unread (the kernel answers further data with a reset).
# Prints "DISCONNECT upload=N response=N" (connections made).
#   usage: perl disconnect.pl HOST PORT PATH BODY_FILE COUNT
use strict;
use warnings;
use IO::Socket::INET;

my ($host, $port, $path, $file, $count) = @ARGV;
die "usage: disconnect.pl HOST PORT PATH BODY_FILE COUNT\n"
    unless defined $count;
$SIG{PIPE} = 'IGNORE';
open(my $f, '<:raw', $file) or die "$file: $!\n";
my $body = do { local $/; <$f> };
close $f;
my $len = length $body;
my $head = "POST $path HTTP/1.1\r\nHost: t\r\n"
    . "Content-Type: application/json\r\nContent-Length: $len\r\n\r\n";

my %made = (upload => 0, response => 0);
for my $i (1 .. $count) {
    for my $mode ('upload', 'response') {
        my $s = IO::Socket::INET->new(PeerAddr => $host, PeerPort => $port,
            Proto => 'tcp', Timeout => 5) or next;
        $made{$mode}++;
        if ($mode eq 'upload') {
            syswrite($s, $head . substr($body, 0, int($len / 2)));
        } else {
            syswrite($s, $head . $body);
            my ($buf, $got) = ('', 0);
            while ($got < 4096) {
                my $n = sysread($s, $buf, 4096 - $got) or last;
                $got += $n;
            }
        }
        close $s;
    }
}
print "DISCONNECT upload=$made{upload} response=$made{response}\n";
